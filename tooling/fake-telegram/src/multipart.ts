// `multipart/form-data` the way the Telegram Bot API server reads it (tdlib's `HttpReader`, read from
// tdlib/td), not the way browsers write it: clients such as grammY send unspaced part headers
// (`content-disposition:form-data;name="x"`) and an unquoted `filename=report 1.pdf`, which the WHATWG parser
// behind `Request.formData()` refuses and the real server accepts. Owns splitting a body into fields and files;
// request-body.ts owns what the values mean.
//
// The rules (as HttpReader): the boundary is the `boundary=` parameter of the Content-Type (quotes stripped),
// everything before the first `--boundary` is skipped; a part's headers run to the first blank line (none →
// "headers in multipart/form-data are empty"); a header name is trimmed and lower-cased, a value may continue on
// lines starting with a space or tab; `Content-Disposition` must start with exactly `form-data;`; its
// parameters are `key=value` separated by `;`, a value either a quoted string (backslash escapes, a missing
// closing quote is an error) or a bare token up to the next `;` (trimmed, so it may hold spaces), then
// %-decoded; `name` is required; a part with a `filename` parameter (even an empty one) is a file, else a
// field; a field part whose Content-Type starts with `application/x-www-form-urlencoded` holds url-encoded
// parameters; the part's content ends at the next CRLF `--boundary`; `--` after a boundary ends the body.

/** A body the real server refuses; `message` is its wording after "Bad Request: ". */
export class MultipartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MultipartError";
  }
}

export interface MultipartField {
  readonly kind: "field";
  readonly name: string;
  readonly value: string;
}

export interface MultipartFile {
  readonly kind: "file";
  readonly name: string;
  readonly fileName: string;
  readonly contentType: string;
  readonly bytes: Uint8Array;
}

export type MultipartPart = MultipartField | MultipartFile;

/** The boundary of a `multipart/form-data` Content-Type, as HttpReader extracts it. */
export function multipartBoundary(contentType: string): string {
  const at = contentType.toLowerCase().indexOf("boundary");
  if (at === -1) throw new MultipartError("boundary not found");
  const equals = contentType.indexOf("=", at + "boundary".length);
  if (equals === -1) throw new MultipartError("boundary value not found");
  const semicolon = contentType.indexOf(";", equals + 1);
  let boundary = contentType.slice(equals + 1, semicolon === -1 ? undefined : semicolon);
  if (boundary.length > 1 && boundary.startsWith('"') && boundary.endsWith('"'))
    boundary = boundary.slice(1, -1);
  if (boundary === "" || boundary.length > 70) throw new MultipartError("boundary too big or empty");
  return boundary;
}

function isSpace(char: string | undefined): boolean {
  return char === " " || char === "\t" || char === "\r" || char === "\n" || char === "\0" || char === "\v";
}

function trim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text.charAt(start))) start++;
  while (end > start && isSpace(text.charAt(end - 1))) end--;
  return text.slice(start, end);
}

/** tdlib's `url_decode(…, false)`: `%XX` decoded byte-wise, `+` kept, a broken escape kept literally. */
function percentDecode(text: string): string {
  if (!text.includes("%")) return text;
  const bytes: number[] = [];
  const raw = Buffer.from(text, "latin1");
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i] ?? 0;
    const hex = byte === 0x25 ? raw.subarray(i + 1, i + 3).toString("latin1") : "";
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(byte);
  }
  return Buffer.from(bytes).toString("latin1");
}

interface PartHeaders {
  name: string;
  fileName: string | undefined;
  contentType: string;
}

/** Parses one part's header block (latin1 text: header bytes are kept as they are, then read as UTF-8). */
function parsePartHeaders(block: string): PartHeaders {
  const headers: PartHeaders = { name: "", fileName: undefined, contentType: "application/octet-stream" };
  const lines = block.split("\r\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] ?? "";
    while (i + 1 < lines.length && /^[ \t]/.test(lines[i + 1] ?? "")) {
      i++;
      line += `\r\n${lines[i] ?? ""}`;
    }
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon === -1) throw new MultipartError("can't parse form data headers");
    const headerName = trim(line.slice(0, colon)).toLowerCase();
    let value = trim(line.slice(colon + 1));
    if (headerName === "content-type") {
      headers.contentType = value;
      continue;
    }
    if (headerName !== "content-disposition") continue;
    if (!value.startsWith("form-data;")) throw new MultipartError("expected form-data content disposition");
    value = value.slice("form-data;".length);
    for (;;) {
      value = trim(value);
      const equals = value.indexOf("=");
      if (equals === -1) break;
      const key = trim(value.slice(0, equals));
      value = value.slice(equals + 1);
      while (value.length > 0 && isSpace(value.charAt(0))) value = value.slice(1);
      let parameter: string;
      if (value.startsWith('"')) {
        let decoded = "";
        let index = 1;
        for (;;) {
          if (index >= value.length) {
            throw new MultipartError("unclosed quoted string in Content-Disposition header");
          }
          let char = value.charAt(index++);
          if (char === '"') break;
          if (char === "\\") {
            if (index >= value.length) {
              throw new MultipartError("wrong escape sequence in Content-Disposition header");
            }
            char = value.charAt(index++);
          }
          decoded += char;
        }
        parameter = decoded;
        value = value.slice(index);
        while (value.length > 0 && isSpace(value.charAt(0))) value = value.slice(1);
        if (value.length > 0) {
          if (!value.startsWith(";")) throw new MultipartError("expected ';' in Content-Disposition header");
          value = value.slice(1);
        }
      } else {
        const semicolon = value.indexOf(";");
        parameter = trim(semicolon === -1 ? value : value.slice(0, semicolon));
        value = semicolon === -1 ? "" : value.slice(semicolon + 1);
      }
      parameter = percentDecode(parameter);
      if (key === "name") headers.name = parameter;
      else if (key === "filename") headers.fileName = parameter;
    }
  }
  return headers;
}

/** Splits a multipart body into its fields and files, in order. */
export function parseMultipart(body: Buffer, contentType: string): MultipartPart[] {
  const boundary = multipartBoundary(contentType);
  const delimiter = Buffer.from(`\r\n--${boundary}`, "latin1");
  const first = body.indexOf(delimiter.subarray(2));
  if (first === -1) return []; // HttpReader keeps skipping the prologue: no part at all
  let index = first + delimiter.length - 2;
  const parts: MultipartPart[] = [];
  for (;;) {
    if (body.subarray(index, index + 2).toString("latin1") === "--") return parts;
    const headersEnd = body.indexOf("\r\n\r\n", index, "latin1");
    if (headersEnd === -1) throw new MultipartError("can't parse form data headers");
    if (headersEnd === index) throw new MultipartError("headers in multipart/form-data are empty");
    // HttpReader skips the two bytes after the boundary (normally CRLF) before reading headers
    const block = body.subarray(index + 2, headersEnd).toString("latin1");
    const headers = parsePartHeaders(block);
    if (headers.name === "") throw new MultipartError("field name in multipart/form-data not found");
    const contentStart = headersEnd + 4;
    const contentEnd = body.indexOf(delimiter, contentStart);
    if (contentEnd === -1) throw new MultipartError("can't find the end of a multipart/form-data part");
    const content = body.subarray(contentStart, contentEnd);
    const name = Buffer.from(headers.name, "latin1").toString("utf8");
    if (headers.fileName !== undefined) {
      parts.push({
        kind: "file",
        name,
        fileName: Buffer.from(headers.fileName, "latin1").toString("utf8"),
        contentType: headers.contentType,
        bytes: new Uint8Array(content),
      });
    } else if (headers.contentType.startsWith("application/x-www-form-urlencoded")) {
      for (const [key, value] of new URLSearchParams(content.toString("utf8"))) {
        parts.push({ kind: "field", name: key, value });
      }
    } else {
      parts.push({ kind: "field", name, value: content.toString("utf8") });
    }
    index = contentEnd + delimiter.length;
  }
}
