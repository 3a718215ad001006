// The picture check every adapter uses: the first bytes decide, never a claimed type.
import { describe, expect, it } from "vitest";
import { inboundImageOf, sniffImageType } from "./inbound-images.ts";

const PNG_HEAD = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

describe("inbound images", () => {
  it("knows PNG, JPEG, GIF and WebP by their first bytes and nothing else", () => {
    expect(sniffImageType(new Uint8Array(PNG_HEAD))).toBe("image/png");
    expect(sniffImageType(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(sniffImageType(Buffer.from("GIF89a..."))).toBe("image/gif");
    expect(sniffImageType(Buffer.from("RIFF\0\0\0\0WEBPVP8 "))).toBe("image/webp");
    expect(sniffImageType(Buffer.from("<!DOCTYPE html><html>"))).toBeUndefined();
    expect(sniffImageType(new Uint8Array([0x89, 0x50]))).toBeUndefined();
  });

  it("turns a picture's bytes into base64 with its type, and refuses what is not one", () => {
    const bytes = new Uint8Array([...PNG_HEAD, 1, 2, 3]);
    expect(inboundImageOf(bytes.subarray(0))).toEqual({
      type: "image",
      data: Buffer.from(bytes).toString("base64"),
      mimeType: "image/png",
    });
    expect(inboundImageOf(Buffer.from("Sign in to Slack"))).toBeUndefined();
  });
});
