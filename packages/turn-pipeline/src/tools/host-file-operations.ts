// The file tools' operations in an unsandboxed session: files opened with O_NOFOLLOW | O_NONBLOCK and
// `fstat`ed, so a link appearing at the last component is not followed and a FIFO, socket or device is
// refused at once instead of blocking a libuv thread. Owns: pi's host `WriteOperations` / `EditOperations`.
// Does not own: the host view's path checks (path-view.ts) or the read tool's host source (read-tool.ts).
import { constants } from "node:fs";
import { type FileHandle, lstat, mkdir, open } from "node:fs/promises";
import { type EditOperations, formatSize, type WriteOperations } from "@earendil-works/pi-coding-agent";
import { FileToolError, MAX_EDIT_FILE_BYTES } from "./file-tool-basics.ts";

// ---------------------------------------------------------------------------------------------------------
// Unsandboxed: the host, with files opened so that nothing but a regular file is ever read or written.

/** Never follow a link at the last component; never wait for a FIFO's other end. */
const SAFE_OPEN = constants.O_NOFOLLOW | constants.O_NONBLOCK;

function kindOfNonFile(stats: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isSymbolicLink(): boolean;
}): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a named pipe";
  if (stats.isSocket()) return "a socket";
  if (stats.isSymbolicLink()) return "a symbolic link";
  return "a device";
}

function notAFile(path: string, stats: Parameters<typeof kindOfNonFile>[0]): FileToolError {
  return new FileToolError(
    `"${path}" is ${kindOfNonFile(stats)}, not a file`,
    stats.isDirectory() ? "EISDIR" : undefined,
  );
}

/** Opens a regular file on the host, or throws a message (with pi's errno code where it has one). */
async function openRegularFile(path: string, flags: number, mode?: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | SAFE_OPEN, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR")
      throw new FileToolError(`file "${path}" does not exist`, "ENOENT");
    if (code === "ELOOP") {
      throw new FileToolError(
        `"${path}" became a symbolic link while being opened; not following it`,
        "ELOOP",
      );
    }
    // O_WRONLY | O_NONBLOCK on a FIFO without a reader, or on a socket.
    if (code === "ENXIO") throw new FileToolError(`"${path}" is a named pipe or socket, not a file`, "ENXIO");
    if (code === "EISDIR") throw new FileToolError(`"${path}" is a directory, not a file`, "EISDIR");
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notAFile(path, stats);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Refuses, before opening anything, a path that names something other than a regular file (or nothing). */
async function refuseNonFile(path: string): Promise<void> {
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return;
    throw error;
  }
  // Opening a device can do things (a tape rewinds, a terminal becomes the controlling one): never try.
  if (!stats.isFile()) throw notAFile(path, stats);
}

async function writeOnHost(path: string, content: string): Promise<void> {
  await refuseNonFile(path);
  // Not O_TRUNC: the file is truncated only once it is known to be a regular file.
  const handle = await openRegularFile(path, constants.O_WRONLY | constants.O_CREAT, 0o666);
  try {
    await handle.truncate(0);
    await handle.writeFile(content, "utf8");
  } finally {
    await handle.close();
  }
}

async function loadOnHost(path: string, maxBytes: number): Promise<Buffer> {
  await refuseNonFile(path);
  const handle = await openRegularFile(path, constants.O_RDONLY);
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) {
      throw new FileToolError(
        `"${path}" is larger than the ${formatSize(maxBytes)} edit loads; use exec (sed, a script) to change it`,
        "EFBIG",
      );
    }
    // Read to the end, whatever the size said: the file may have grown since.
    const parts: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, Math.max(size - total, 64 * 1024)));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
      if (bytesRead === 0) break;
      parts.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) {
        throw new FileToolError(`"${path}" grew past the ${formatSize(maxBytes)} edit loads`, "EFBIG");
      }
    }
    return Buffer.concat(parts, total);
  } finally {
    await handle.close();
  }
}

/** pi's write operations on the host (paths are host paths the view resolved, every link followed). */
export function hostWriteOperations(): WriteOperations {
  return {
    mkdir: async (dir) => {
      await mkdir(dir, { recursive: true });
    },
    writeFile: writeOnHost,
  };
}

/** pi's edit operations on the host. */
export function hostEditOperations(maxBytes = MAX_EDIT_FILE_BYTES): EditOperations {
  return {
    access: async (path) => {
      await refuseNonFile(path);
      // Readable and writable, as pi's own access check asks; opened, so a FIFO is refused without waiting.
      const handle = await openRegularFile(path, constants.O_RDWR);
      await handle.close();
    },
    readFile: (path) => loadOnHost(path, maxBytes),
    writeFile: writeOnHost,
  };
}
