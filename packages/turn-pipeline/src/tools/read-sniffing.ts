// What a file's first bytes say: binary or text (NUL bytes, invalid UTF-8), what its magic bytes name ("a PNG
// image"), and pi's image type, detected from a private temporary copy of the head. Owns: those sniffs. Does
// not own: reading the bytes (read-source.ts) or what the tool answers (read-tool.ts).
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectSupportedImageMimeTypeFromFile } from "@earendil-works/pi-coding-agent";

/** How much of the file's start decides "binary": NUL bytes or invalid UTF-8 in it. */
export const BINARY_SNIFF_BYTES = 8 * 1024;

/** Whether a file's first bytes are not text: a NUL byte, or invalid UTF-8 (a character cut at the end of a
 * sniff shorter than the file excepted). */
export function looksBinary(head: Buffer, wholeFile: boolean): boolean {
  if (head.includes(0)) return true;
  try {
    // `stream: true` holds back an incomplete last character instead of rejecting it.
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: !wholeFile });
    return false;
  } catch {
    return true;
  }
}

function startsWithBytes(head: Buffer, bytes: readonly number[], at = 0): boolean {
  return bytes.every((byte, index) => head[at + index] === byte);
}

function startsWithText(head: Buffer, text: string, at = 0): boolean {
  return head.length >= at + text.length && head.toString("latin1", at, at + text.length) === text;
}

/** What a binary file's magic bytes say it is ("a PNG image"), or undefined when they say nothing known. */
export function describeMagic(head: Buffer): string | undefined {
  if (startsWithBytes(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "a PNG image";
  if (startsWithBytes(head, [0xff, 0xd8, 0xff])) return "a JPEG image";
  if (startsWithText(head, "GIF87a") || startsWithText(head, "GIF89a")) return "a GIF image";
  if (startsWithText(head, "RIFF") && startsWithText(head, "WEBP", 8)) return "a WebP image";
  if (startsWithText(head, "RIFF") && startsWithText(head, "WAVE", 8)) return "WAV audio";
  if (startsWithText(head, "BM") && head.length >= 26) return "a BMP image";
  if (startsWithBytes(head, [0x7f, 0x45, 0x4c, 0x46])) return "an ELF executable";
  if (startsWithText(head, "MZ")) return "a Windows executable";
  if (
    startsWithBytes(head, [0xcf, 0xfa, 0xed, 0xfe]) ||
    startsWithBytes(head, [0xce, 0xfa, 0xed, 0xfe]) ||
    startsWithBytes(head, [0xfe, 0xed, 0xfa, 0xcf]) ||
    startsWithBytes(head, [0xfe, 0xed, 0xfa, 0xce])
  ) {
    return "a Mach-O executable";
  }
  if (startsWithBytes(head, [0x00, 0x61, 0x73, 0x6d])) return "a WebAssembly module";
  if (startsWithBytes(head, [0x1f, 0x8b])) return "gzip data";
  if (startsWithText(head, "BZh")) return "bzip2 data";
  if (startsWithBytes(head, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) return "xz data";
  if (startsWithBytes(head, [0x28, 0xb5, 0x2f, 0xfd])) return "zstd data";
  if (startsWithBytes(head, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])) return "a 7-zip archive";
  if (
    startsWithBytes(head, [0x50, 0x4b, 0x03, 0x04]) ||
    startsWithBytes(head, [0x50, 0x4b, 0x05, 0x06]) ||
    startsWithBytes(head, [0x50, 0x4b, 0x07, 0x08])
  ) {
    return "a zip archive";
  }
  if (startsWithText(head, "ustar", 257)) return "a tar archive";
  if (startsWithText(head, "%PDF-")) return "a PDF document";
  if (startsWithText(head, "SQLite format 3\u0000")) return "an SQLite database";
  if (startsWithText(head, "ftyp", 4)) return "an MP4/QuickTime media file";
  if (startsWithText(head, "ID3")) return "MP3 audio";
  if (startsWithText(head, "OggS")) return "Ogg media";
  if (startsWithText(head, "fLaC")) return "FLAC audio";
  if (startsWithBytes(head, [0xca, 0xfe, 0xba, 0xbe])) return "a Java class file or Mach-O universal binary";
  return undefined;
}

/** Bytes pi's image detection looks at. */
const IMAGE_SNIFF_BYTES = 4100;
let sniffDirectory: Promise<string> | undefined;

/**
 * pi's image type of a file from its first bytes. pi detects from a path only, and the file's own path is not
 * opened twice (it may have changed, or be the sandbox's): its first bytes go to a private temporary file.
 */
export async function imageMimeTypeOf(head: Buffer): Promise<string | null> {
  sniffDirectory ??= mkdtemp(join(tmpdir(), "read-tool-sniff-")).then((dir) => {
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  });
  let sniff: string;
  try {
    sniff = join(await sniffDirectory, randomUUID());
    await writeFile(sniff, head.subarray(0, IMAGE_SNIFF_BYTES), { mode: 0o600, flag: "wx" });
  } catch {
    // No temporary directory to write in: the file is described as binary rather than not read at all.
    sniffDirectory = undefined;
    return null;
  }
  try {
    return await detectSupportedImageMimeTypeFromFile(sniff);
  } finally {
    await rm(sniff, { force: true });
  }
}
