import { describe, expect, it } from "vitest";
import { MultipartError, multipartBoundary, parseMultipart } from "./multipart.ts";

const CT = "multipart/form-data; boundary=XyZ";

function body(...parts: string[]): Buffer {
  return Buffer.from(
    `preamble\r\n${parts.map((part) => `--XyZ\r\n${part}\r\n`).join("")}--XyZ--\r\n`,
    "utf8",
  );
}

function refusal(raw: Buffer, contentType = CT): string {
  try {
    parseMultipart(raw, contentType);
  } catch (error) {
    if (error instanceof MultipartError) return error.message;
    throw error;
  }
  throw new Error("expected the body to be refused");
}

describe("parseMultipart (the Bot API server's HttpReader rules)", () => {
  it("reads unspaced headers, bare and quoted values, escapes and %-encoding", () => {
    const parts = parseMultipart(
      body(
        'content-disposition:form-data;name="chat_id"\r\n\r\n42',
        "Content-Disposition: form-data; name=doc; filename=report 1.txt\r\nCONTENT-TYPE: text/plain\r\n\r\nbytes",
        'content-disposition: form-data; name="a\\"b"; filename="x%C3%A9.txt"\r\n\r\n',
        'content-disposition:form-data;name="form"\r\ncontent-type:application/x-www-form-urlencoded\r\n\r\nx=1&y=a+b',
      ),
      CT,
    );
    expect(
      parts.map((part) =>
        part.kind === "field"
          ? [part.name, part.value]
          : [part.name, part.fileName, part.contentType, Buffer.from(part.bytes).toString()],
      ),
    ).toEqual([
      ["chat_id", "42"],
      ["doc", "report 1.txt", "text/plain", "bytes"],
      ['a"b', "xé.txt", "application/octet-stream", ""],
      ["x", "1"],
      ["y", "a b"],
    ]);
  });

  it("finds a quoted boundary among other parameters", () => {
    expect(multipartBoundary('multipart/form-data; charset=utf-8; Boundary="a b"')).toBe("a b");
    expect(multipartBoundary("multipart/form-data;boundary=q;x=1")).toBe("q");
  });

  it("refuses what the real server refuses, with its wording", () => {
    expect(refusal(Buffer.from("--XyZ\r\n"), "multipart/form-data")).toBe("boundary not found");
    expect(refusal(body('content-disposition: attachment; name="x"\r\n\r\n1'))).toBe(
      "expected form-data content disposition",
    );
    expect(refusal(body("content-disposition: form-data; filename=a\r\n\r\n1"))).toBe(
      "field name in multipart/form-data not found",
    );
    expect(refusal(body('content-disposition: form-data; name="x\r\n\r\n1'))).toBe(
      "unclosed quoted string in Content-Disposition header",
    );
    expect(refusal(body('content-disposition: form-data; name="x" y\r\n\r\n1'))).toBe(
      "expected ';' in Content-Disposition header",
    );
    expect(refusal(Buffer.from("--XyZ\r\n\r\n\r\nx\r\n--XyZ--"))).toBe(
      "headers in multipart/form-data are empty",
    );
  });
});
