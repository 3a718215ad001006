// Where the read tool's bytes come from: a file opened for reading (its size when opened, its bytes in
// order), the source that opens one by the model's path, reading a file's next bytes in full, and the host
// source — the path resolved in the view, the file opened without following a link or waiting on a FIFO.
// Owns: those. Does not own: the path rules (path-view.ts), the sandboxed source (sandbox-file-operations.ts)
// or what is done with the bytes (read-tool.ts, read-window.ts).
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { type PathView, resolveInView } from "./path-view.ts";

/** A file opened for the read tool: its size when opened and its bytes, in order from the start. */
export interface ReadableFile {
  /** The file as the model named it, absolute in the view. */
  readonly viewPath: string;
  readonly size: number;
  /**
   * The next bytes of the file: at most `maxBytes` (maybe fewer), and none at its end. They may be overwritten
   * by the next read (a source reuses its buffer): copy what is kept.
   */
  read(maxBytes: number): Promise<Buffer>;
  /** Stops reading; the rest of the file is not wanted. */
  close(): Promise<void>;
}

/**
 * Opens the file `requested` names (relative to the view's cwd, or absolute in the view), or throws a message
 * the model can act on: missing, outside the view, not a regular file.
 */
export type ReadSource = (requested: string, signal: AbortSignal | undefined) => Promise<ReadableFile>;

/** How much one read of a file asks for. */
export const READ_CHUNK_BYTES = 64 * 1024;

/** The next `length` bytes of the file, fewer only at its end. */
export async function readFully(file: ReadableFile, length: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let filled = 0;
  while (filled < length) {
    const chunk = await file.read(length - filled);
    if (chunk.length === 0) break;
    // A copy: the source may reuse its buffer.
    parts.push(Buffer.from(chunk));
    filled += chunk.length;
  }
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, filled);
}

/** The error an aborted read rejects with (pi's wording). */
export function aborted(): Error {
  return new Error("Operation aborted");
}

/** The open file, or an error a model can act on. */
async function openForReading(hostPath: string, requested: string): Promise<FileHandle> {
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below as not a regular file).
    // O_NOFOLLOW: the path has its links followed already; one appearing since is a race, not a file.
    return await open(hostPath, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new Error(`file "${requested}" does not exist`);
    if (code === "EACCES" || code === "EPERM") throw new Error(`permission denied reading "${requested}"`);
    if (code === "ELOOP") throw new Error(`file "${requested}" became a symbolic link while being read`);
    if (code === "EISDIR") throw new Error(`"${requested}" is a directory, not a file`);
    throw error;
  }
}

function kindOfNonFile(stats: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a named pipe";
  if (stats.isSocket()) return "a socket";
  return "a device";
}

/** A host file read in order through its handle. */
class HostReadableFile implements ReadableFile {
  readonly viewPath: string;
  readonly size: number;
  readonly #handle: FileHandle;
  readonly #buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  #position = 0;

  constructor(handle: FileHandle, viewPath: string, size: number) {
    this.#handle = handle;
    this.viewPath = viewPath;
    this.size = size;
  }

  async read(maxBytes: number): Promise<Buffer> {
    const length = Math.min(maxBytes, this.#buffer.length);
    const { bytesRead } = await this.#handle.read(this.#buffer, 0, length, this.#position);
    this.#position += bytesRead;
    return this.#buffer.subarray(0, bytesRead);
  }

  close(): Promise<void> {
    return this.#handle.close();
  }
}

/**
 * Files on the host: the path resolved in the view (links followed, none leaving it), then opened with
 * O_NOFOLLOW | O_NONBLOCK and refused unless it is a regular file, so a FIFO never blocks.
 */
export function hostReadSource(view: PathView): ReadSource {
  return async (requested) => {
    const { hostPath, viewPath } = await resolveInView(view, requested, "read");
    const handle = await openForReading(hostPath, requested);
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new Error(`"${requested}" is ${kindOfNonFile(stats)}, not a file`);
      return new HostReadableFile(handle, viewPath, stats.size);
    } catch (error) {
      await handle.close();
      throw error;
    }
  };
}
