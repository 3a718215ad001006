// `agent --image <path>`: the files given become the turn's `TurnInput.images`. Owns reading them, telling an
// image from anything else by its first bytes (a file's extension says nothing about what it holds), and
// refusing what the kernel would refuse — a file that is missing, not a PNG/JPEG/GIF/WebP image, or over the
// kernel's size cap, or too many files — with a usage error (exit 2) naming the file. Does not own what the
// images become in the turn (the kernel and the executor).
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { TURN_IMAGE_MAX_BYTES, TURN_IMAGE_MAX_COUNT } from "@agent-kernel/kernel";
import { CliError, EXIT } from "./exit-codes.ts";

/** One image as `TurnInput.images` holds it. */
export interface ImageInput {
  readonly type: "image";
  readonly data: string;
  readonly mimeType: string;
}

/** The image type the bytes start with (PNG, JPEG, GIF, WebP), or undefined. */
export function sniffImageType(head: Uint8Array): string | undefined {
  const starts = (bytes: readonly number[], at = 0) =>
    bytes.every((byte, index) => head[at + index] === byte);
  const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (starts(ascii("GIF87a")) || starts(ascii("GIF89a"))) return "image/gif";
  if (starts(ascii("RIFF")) && starts(ascii("WEBP"), 8)) return "image/webp";
  return undefined;
}

const mebibytes = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

function readHead(path: string): Uint8Array {
  const head = new Uint8Array(12);
  const fd = openSync(path, "r");
  try {
    const read = readSync(fd, head, 0, head.length, 0);
    return head.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** Reads `--image` files, in order; every refusal is a usage error naming the file and what is wrong. */
export function readImageFiles(paths: readonly string[]): ImageInput[] {
  if (paths.length > TURN_IMAGE_MAX_COUNT) {
    throw new CliError(
      EXIT.usage,
      `--image: at most ${TURN_IMAGE_MAX_COUNT} images in one turn, got ${paths.length}.`,
    );
  }
  return paths.map((path) => {
    let size: number;
    try {
      const stat = statSync(path);
      if (!stat.isFile()) throw new CliError(EXIT.usage, `--image ${path}: not a file.`);
      size = stat.size;
    } catch (error) {
      if (error instanceof CliError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new CliError(
        EXIT.usage,
        `--image ${path}: ${code === "ENOENT" ? "no such file" : `cannot read it (${code ?? String(error)})`}.`,
      );
    }
    if (size > TURN_IMAGE_MAX_BYTES) {
      throw new CliError(
        EXIT.usage,
        `--image ${path}: ${size} bytes (${mebibytes(size)}) is over the limit of ${TURN_IMAGE_MAX_BYTES} bytes (${mebibytes(TURN_IMAGE_MAX_BYTES)}) for one image.`,
      );
    }
    const mimeType = sniffImageType(readHead(path));
    if (mimeType === undefined) {
      throw new CliError(
        EXIT.usage,
        `--image ${path}: not a PNG, JPEG, GIF or WebP image (judged by its first bytes, not its name).`,
      );
    }
    return { type: "image", data: readFileSync(path).toString("base64"), mimeType };
  });
}
