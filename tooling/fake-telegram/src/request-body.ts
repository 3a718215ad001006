// Reads the parameters of a Bot API call the four ways Telegram accepts them: the query string,
// `application/json`, `application/x-www-form-urlencoded` and `multipart/form-data` (uploads, read as leniently
// as the real server does: multipart.ts). Owns decoding and the typed accessors the methods use (Telegram takes
// "123" for an integer and a JSON-serialised string for an object field in form bodies); does not own what a
// method does with them (message-methods.ts, file-methods.ts, update-queue.ts).
import type { IncomingMessage } from "node:http";
import { MultipartError, type MultipartPart, parseMultipart } from "./multipart.ts";

export interface UploadedFile {
  readonly field: string;
  readonly fileName: string;
  readonly mimeType: string;
  readonly bytes: Uint8Array;
}

export interface CallParams {
  readonly values: Record<string, unknown>;
  readonly files: UploadedFile[];
  readonly contentType: string;
}

/** A parameter Telegram would reject, with its wording ("Bad Request: chat_id is empty"). */
export class BadParamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BadParamError";
  }
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/** Form values are strings; object and array fields arrive JSON-serialised. */
function formValue(value: string): unknown {
  const first = value.trimStart().charAt(0);
  if (first === "{" || first === "[") {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

export async function readCallParams(req: IncomingMessage, query: URLSearchParams): Promise<CallParams> {
  const values: Record<string, unknown> = {};
  for (const [key, value] of query) values[key] = formValue(value);
  const files: UploadedFile[] = [];
  const contentType = (req.headers["content-type"] ?? "").toLowerCase();
  const body = await readAll(req);
  if (body.length === 0) return { values, files, contentType };
  if (contentType.startsWith("application/json")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      throw new BadParamError("Bad Request: can't parse JSON object");
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new BadParamError("Bad Request: can't parse JSON object");
    }
    Object.assign(values, parsed);
    return { values, files, contentType };
  }
  if (contentType.includes("multipart/form-data")) {
    let parts: MultipartPart[];
    try {
      // the Bot API server's own lenient reader, not the WHATWG one: grammY's parts pass only there
      parts = parseMultipart(body, req.headers["content-type"] ?? "");
    } catch (error) {
      if (error instanceof MultipartError) throw new BadParamError(`Bad Request: ${error.message}`);
      throw error;
    }
    for (const part of parts) {
      if (part.kind === "field") values[part.name] = formValue(part.value);
      else {
        files.push({
          field: part.name,
          fileName: part.fileName,
          mimeType: part.contentType,
          bytes: part.bytes,
        });
      }
    }
    return { values, files, contentType };
  }
  if (contentType.includes("application/x-www-form-urlencoded")) {
    for (const [key, value] of new URLSearchParams(body.toString("utf8"))) values[key] = formValue(value);
    return { values, files, contentType };
  }
  throw new BadParamError(`Bad Request: unsupported Content-Type "${contentType}"`);
}

export function optionalString(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new BadParamError(`Bad Request: field "${name}" must be of type String`);
}

export function optionalInt(values: Record<string, unknown>, name: string): number | undefined {
  const value = values[name];
  if (value === undefined || value === null || value === "") return undefined;
  const number = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  if (!Number.isInteger(number))
    throw new BadParamError(`Bad Request: field "${name}" must be of type Integer`);
  return number;
}

export function optionalBool(values: Record<string, unknown>, name: string): boolean | undefined {
  const value = values[name];
  if (value === undefined || value === null) return undefined;
  if (value === true || value === "true" || value === 1 || value === "1") return true;
  if (value === false || value === "false" || value === 0 || value === "0") return false;
  throw new BadParamError(`Bad Request: field "${name}" must be of type Boolean`);
}

export function optionalObject(
  values: Record<string, unknown>,
  name: string,
): Record<string, unknown> | undefined {
  const value = values[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new BadParamError(`Bad Request: can't parse ${name} JSON object`);
}

export function optionalStringArray(values: Record<string, unknown>, name: string): string[] | undefined {
  const value = values[name];
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value;
  throw new BadParamError(`Bad Request: can't parse ${name} JSON array`);
}
