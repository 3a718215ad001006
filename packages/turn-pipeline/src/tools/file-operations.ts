// Where the file tools touch files. Owns: pi's `WriteOperations` / `EditOperations` for both kinds of session,
// the read tool's source in a sandboxed one (read-tool.ts has the host's), and the lexical check of a path in a
// sandbox's view.
//
// Sandboxed: every access is a short shell command run by the session's engine, like `exec` — so the path is
// resolved by the kernel inside the sandbox's mount namespace, as the sandbox's user. Nothing is opened or
// followed on the host: a link swapped in by a racing `exec` can only lead where the sandbox already sees, and
// a FIFO can only block a sandboxed command, which the engine's wall time kills. Before anything runs, the path
// is checked lexically against the view, for clear messages ("outside the workspace", "read-only").
//
// Unsandboxed: the host view's checks stay (path-view.ts resolves links and refuses those leaving the
// workspace); files are then opened with O_NOFOLLOW | O_NONBLOCK and `fstat`ed, so a link appearing at the last
// component is not followed and a FIFO, socket or device is refused at once instead of blocking a libuv thread
// (four such calls would stall the gateway's whole filesystem).
//
// Does not own: the path rules of the host view (path-view.ts), what the tools do with the bytes (pi's write
// and edit, read-tool.ts), or containment (the engines).
import { constants } from "node:fs";
import { type FileHandle, lstat, mkdir, open } from "node:fs/promises";
import { posix } from "node:path";
import type { SandboxLimits, SandboxResult } from "@agent-kernel/sandbox";
import { type EditOperations, formatSize, type WriteOperations } from "@earendil-works/pi-coding-agent";
import {
  describeMounts,
  isWithin,
  type PathAccess,
  type PathMount,
  type PathView,
  WorkspacePathError,
} from "./path-view.ts";
import type { ReadableFile, ReadSource } from "./read-tool.ts";
import type { ToolSandbox } from "./tool-sandbox.ts";

/** Largest file `edit` loads (pi's edit holds the whole file, twice, plus the diff). */
export const MAX_EDIT_FILE_BYTES = 10 * 1024 * 1024;

/**
 * An error a model can act on, with `code` (an errno name) only when there is one: pi's edit then reports
 * just the code ("Could not edit file: x. Error code: ENOENT."), as for its own file access, and the message
 * otherwise.
 */
class FileToolError extends Error {
  declare readonly code?: string;
  constructor(message: string, code?: string) {
    super(message);
    if (code !== undefined) Object.defineProperty(this, "code", { value: code, enumerable: true });
  }
}

function aborted(): Error {
  return new Error("Operation aborted");
}

// ---------------------------------------------------------------------------------------------------------
// The lexical check of a sandboxed session's path.

export interface ViewLocation {
  /** The path, absolute in the view (no link followed: the sandbox follows them). */
  readonly viewPath: string;
  /** The mount the path names. */
  readonly mount: PathMount;
}

/**
 * Where `requested` (relative to the view's cwd, or absolute in the view) is in the view, by its spelling
 * alone, or a `WorkspacePathError` saying why it is refused: empty, NUL, `~`, outside every mount, or (for
 * writing) in a read-only mount. Touches no file: in a sandbox the kernel resolves the path, links included,
 * and enforces the mounts.
 */
export function locateInView(view: PathView, requested: string, access: PathAccess): ViewLocation {
  if (typeof requested !== "string" || requested.trim() === "") {
    throw new WorkspacePathError("path is empty; give a path relative to the workspace");
  }
  if (requested.includes("\u0000")) throw new WorkspacePathError("path contains a NUL character");
  if (requested === "~" || requested.startsWith("~/")) {
    throw new WorkspacePathError(`path "${requested}" points into the home directory, outside the workspace`);
  }
  if (!posix.isAbsolute(view.cwd))
    throw new TypeError(`a path view's cwd must be absolute (got ${view.cwd})`);
  const viewPath = posix.resolve(view.cwd, requested);
  let best: { mount: PathMount; root: string } | undefined;
  for (const mount of view.mounts) {
    const root = posix.resolve(mount.path);
    if (!isWithin(root, viewPath)) continue;
    if (best === undefined || root.length > best.root.length) best = { mount, root };
  }
  if (best === undefined) {
    throw new WorkspacePathError(
      `path "${requested}" is outside the workspace (files are under ${describeMounts(view)})`,
    );
  }
  if (access === "write" && !best.mount.writable) {
    throw new WorkspacePathError(`path "${requested}" is in ${best.mount.path}, which is read-only`);
  }
  return { viewPath, mount: best.mount };
}

// ---------------------------------------------------------------------------------------------------------
// Sandboxed: shell commands run by the session's engine.

/** `value` as one shell word: single-quoted, any `'` closed, escaped and reopened. Newlines stay literal. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

// Exit codes of the file commands (the shell's own are below 128; 128 + n is death by signal n).
const EXIT_MISSING = 40;
const EXIT_DIRECTORY = 41;
const EXIT_FIFO = 42;
const EXIT_SOCKET = 43;
const EXIT_DEVICE = 44;
const EXIT_NOT_REGULAR = 45;
const EXIT_OPEN_FAILED = 47;
const EXIT_MKDIR_FAILED = 48;
const EXIT_TOO_LARGE = 49;
/** SIGXFSZ: the sandbox's file size limit (`ulimit -f`) stopped the write. */
const EXIT_FILE_SIZE_LIMIT = 128 + 25;

/**
 * What every file command starts with: its arguments as `$1`, `$2` (quoted: never part of the shell text
 * unquoted), and `__kind`, which exits with the code of what a path names when it is not a regular file.
 * Messages of failed steps go to standard output (`2>&1`), before any content: the command's standard error
 * also carries the shell's own noise, which is not the model's business.
 */
function fileCommand(args: readonly string[], steps: readonly string[]): string {
  return [
    `set -- ${args.map(shellQuote).join(" ")}`,
    `__kind() { if [ -d "$1" ]; then exit ${EXIT_DIRECTORY}; elif [ -p "$1" ]; then exit ${EXIT_FIFO}; elif [ -S "$1" ]; then exit ${EXIT_SOCKET}; elif [ -b "$1" ] || [ -c "$1" ]; then exit ${EXIT_DEVICE}; fi; exit ${EXIT_NOT_REGULAR}; }`,
    ...steps,
  ].join("\n");
}

/**
 * Exits when nothing is there, saying why (stat's message: missing, or a parent it may not search, or a link
 * loop) without opening anything.
 */
const MISSING_STEP = `[ -e "$1" ] || { stat -L -- "$1" 2>&1 >/dev/null; exit ${EXIT_MISSING}; }`;

/**
 * Streams a regular file: its size on the first line, then its bytes. The checks before opening refuse what
 * is not a regular file at once; opening reads (bash's `<`) could still wait on a FIFO swapped in after them,
 * until the wall time — the open descriptor is checked again, so nothing but a regular file is ever read.
 */
const READ_STEPS = [
  MISSING_STEP,
  `[ -f "$1" ] || __kind "$1"`,
  `{ exec 3<"$1"; } 2>&1 || exit ${EXIT_OPEN_FAILED}`,
  `[ -f /dev/fd/3 ] || exit ${EXIT_NOT_REGULAR}`,
  `stat -L -c %s /dev/fd/3 2>&1 || exit ${EXIT_OPEN_FAILED}`,
  "exec cat <&3",
];

/**
 * Loads a file to edit, at most `maxBytes`: its size on the first line, then its bytes. Opened read-write
 * (`<>`, what edit needs anyway), which never waits on a FIFO.
 */
function editReadSteps(maxBytes: number): string[] {
  return [
    MISSING_STEP,
    `[ -f "$1" ] || __kind "$1"`,
    `{ exec 3<>"$1"; } 2>&1 || exit ${EXIT_OPEN_FAILED}`,
    `[ -f /dev/fd/3 ] || exit ${EXIT_NOT_REGULAR}`,
    `__size=$(stat -L -c %s /dev/fd/3) || exit ${EXIT_OPEN_FAILED}`,
    `printf '%s\\n' "$__size"`,
    `[ "$__size" -le ${maxBytes} ] || exit ${EXIT_TOO_LARGE}`,
    `exec head -c ${maxBytes + 1} <&3`,
  ];
}

/**
 * Writes standard input to `$1`, making `$2` first when given. Opened read-write without truncating (`<>`
 * never waits on a FIFO), checked to be a regular file through the open descriptor, then truncated and
 * written through it: a non-regular file is never changed, and no second lookup of the path happens.
 */
const WRITE_STEPS = [
  `[ -z "$2" ] || mkdir -p -- "$2" 2>&1 || exit ${EXIT_MKDIR_FAILED}`,
  `[ ! -e "$1" ] || [ -f "$1" ] || __kind "$1"`,
  `{ exec 3<>"$1"; } 2>&1 || exit ${EXIT_OPEN_FAILED}`,
  `[ -f /dev/fd/3 ] || exit ${EXIT_NOT_REGULAR}`,
  `truncate -s 0 /dev/fd/3 2>&1 || exit ${EXIT_OPEN_FAILED}`,
  "exec cat 2>&1 >&3",
];

/**
 * The limits of a file command: the session's, but for output — a read streams as much as the read tool
 * takes and is stopped when it has enough (edit loads at most `MAX_EDIT_FILE_BYTES`). All file commands of a
 * sandbox share these settings, so the engine keeps one sandbox started ahead for them.
 */
function fileCommandLimits(limits: SandboxLimits): SandboxLimits {
  return { ...limits, maxOutputBytes: Number.MAX_SAFE_INTEGER };
}

/**
 * The environment of a file command: nothing of the session's (the commands need none of it), and the C locale,
 * so the system's messages are the English ones `reasonOf` reads.
 */
const FILE_COMMAND_ENV: Readonly<Record<string, string>> = Object.freeze({ LC_ALL: "C" });

interface FileCommandRun {
  readonly script: string;
  readonly stdin?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly onStdout?: ((chunk: Buffer) => void) | undefined;
}

function runFileCommand(sandbox: ToolSandbox, run: FileCommandRun): Promise<SandboxResult> {
  return sandbox.engine.run({
    command: run.script,
    cwd: sandbox.cwd,
    env: FILE_COMMAND_ENV,
    mounts: sandbox.mounts,
    // Nothing a file command does needs the network.
    network: false,
    limits: fileCommandLimits(sandbox.limits),
    signal: run.signal,
    onStdout: run.onStdout,
    stdin: run.stdin,
  });
}

/** The reason in a shell or coreutils message ("bash: line 4: /workspace/x: Permission denied"). */
function reasonOf(output: string): string {
  const line =
    output
      .split("\n")
      .map((text) => text.trim())
      .filter((text) => text !== "")
      .pop() ?? "";
  const colon = line.lastIndexOf(": ");
  return (colon === -1 ? line : line.slice(colon + 2)).slice(0, 200);
}

const REASON_CODES: Readonly<Record<string, string>> = {
  "No such file or directory": "ENOENT",
  "Permission denied": "EACCES",
  "Operation not permitted": "EPERM",
  "Read-only file system": "EROFS",
  "Is a directory": "EISDIR",
  "Not a directory": "ENOTDIR",
  "Too many levels of symbolic links": "ELOOP",
  "File exists": "EEXIST",
  "No space left on device": "ENOSPC",
  "Text file busy": "ETXTBSY",
};

/** Why a file command failed, as a message naming `path` (its view path). */
function commandFailure(
  result: SandboxResult,
  output: string,
  path: string,
  verb: "read" | "write",
  limits: SandboxLimits,
  maxBytes = MAX_EDIT_FILE_BYTES,
): Error {
  if (result.aborted) return aborted();
  if (result.timedOut) {
    return new FileToolError(
      `cannot ${verb} "${path}": it did not finish within the sandbox's ${Math.round(limits.timeoutMs / 1000)} s (something holds it open?)`,
      "ETIMEDOUT",
    );
  }
  const reason = reasonOf(output);
  switch (result.exitCode) {
    case EXIT_MISSING:
      if (reason !== "" && reason !== "No such file or directory" && reason !== "Not a directory") {
        return new FileToolError(`cannot ${verb} "${path}": ${reason}`, REASON_CODES[reason]);
      }
      return new FileToolError(`file "${path}" does not exist`, "ENOENT");
    case EXIT_DIRECTORY:
      return new FileToolError(`"${path}" is a directory, not a file`, "EISDIR");
    case EXIT_FIFO:
      return new FileToolError(`"${path}" is a named pipe, not a file`);
    case EXIT_SOCKET:
      return new FileToolError(`"${path}" is a socket, not a file`);
    case EXIT_DEVICE:
      return new FileToolError(`"${path}" is a device, not a file`);
    case EXIT_NOT_REGULAR:
      return new FileToolError(`"${path}" is not a regular file`);
    case EXIT_OPEN_FAILED:
      return new FileToolError(
        `cannot ${verb} "${path}": ${reason || "it could not be opened"}`,
        REASON_CODES[reason],
      );
    case EXIT_MKDIR_FAILED:
      return new FileToolError(
        `cannot create the directory of "${path}": ${reason || "mkdir failed"}`,
        REASON_CODES[reason],
      );
    case EXIT_TOO_LARGE:
      return new FileToolError(
        `"${path}" is larger than the ${formatSize(maxBytes)} edit loads; use exec (sed, a script) to change it`,
        "EFBIG",
      );
    case EXIT_FILE_SIZE_LIMIT:
      return new FileToolError(
        `cannot ${verb} "${path}": a sandboxed file may have at most ${formatSize(limits.maxFileBytes)}`,
        "EFBIG",
      );
    default:
      return new FileToolError(
        `cannot ${verb} "${path}": ${reason || `the sandboxed command failed (${result.signal ?? `exit ${result.exitCode}`})`}`,
        REASON_CODES[reason],
      );
  }
}

/** The first line of a command's output, then the rest, as it arrives. */
class HeaderSplitter {
  #head: Buffer[] = [];
  #headBytes = 0;
  header: string | undefined;

  /** The bytes of `chunk` after the header, once the header is complete (empty before). */
  push(chunk: Buffer): Buffer {
    if (this.header !== undefined) return chunk;
    const newline = chunk.indexOf(0x0a);
    if (newline === -1) {
      // A header is a number; a message is short. Past this, keep only the start (for the message).
      if (this.#headBytes < 64 * 1024) {
        this.#head.push(chunk);
        this.#headBytes += chunk.length;
      }
      return Buffer.alloc(0);
    }
    this.#head.push(chunk.subarray(0, newline));
    this.header = Buffer.concat(this.#head).toString("utf8");
    this.#head = [];
    return chunk.subarray(newline + 1);
  }

  /** What came before any newline (a message without one), or the header. */
  get text(): string {
    return this.header ?? Buffer.concat(this.#head).toString("utf8");
  }
}

const SIZE_HEADER = /^\d+$/;

/** A file's bytes streamed from a sandboxed command (`READ_STEPS`), pulled by the read tool. */
class SandboxedReadableFile implements ReadableFile {
  readonly viewPath: string;
  /** The path as the model gave it, for messages. */
  readonly #requested: string;
  size = 0;
  readonly #sandbox: ToolSandbox;
  readonly #controller = new AbortController();
  readonly #splitter = new HeaderSplitter();
  readonly #queue: Buffer[] = [];
  /** Everything after a header that is not a size: the failure's message. */
  #message = "";
  #result: SandboxResult | undefined;
  #runError: unknown;
  #wake: (() => void) | undefined;
  #closed = false;

  constructor(sandbox: ToolSandbox, viewPath: string, requested: string) {
    this.#sandbox = sandbox;
    this.viewPath = viewPath;
    this.#requested = requested;
  }

  /** Starts the command; resolves once the size arrived, rejects when the command failed before it. */
  async start(signal: AbortSignal | undefined): Promise<void> {
    const onAbort = () => this.#controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    runFileCommand(this.#sandbox, {
      script: fileCommand([this.viewPath], READ_STEPS),
      signal: this.#controller.signal,
      onStdout: (chunk) => this.#take(chunk),
    })
      .then(
        (result) => {
          this.#result = result;
        },
        (error: unknown) => {
          this.#runError = error ?? new Error("the sandboxed read failed");
        },
      )
      .finally(() => {
        signal?.removeEventListener("abort", onAbort);
        this.#notify();
      });
    while (this.#splitter.header === undefined || !SIZE_HEADER.test(this.#splitter.header)) {
      if (this.#finished) throw this.#failure();
      await this.#next();
    }
    this.size = Number(this.#splitter.header);
  }

  get #finished(): boolean {
    return this.#result !== undefined || this.#runError !== undefined;
  }

  #take(chunk: Buffer): void {
    if (this.#closed) return;
    const header = this.#splitter.header;
    if (header !== undefined && !SIZE_HEADER.test(header)) {
      if (this.#message.length < 4096) this.#message += chunk.toString("utf8");
      return;
    }
    const body = this.#splitter.push(chunk);
    if (body.length > 0) this.#queue.push(body);
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #next(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  #failure(): Error {
    if (this.#runError !== undefined) {
      return this.#runError instanceof Error ? this.#runError : new Error(String(this.#runError));
    }
    const result = this.#result as SandboxResult;
    const header = this.#splitter.header;
    const output =
      header !== undefined && SIZE_HEADER.test(header)
        ? this.#message
        : `${this.#splitter.text}\n${this.#message}`;
    return commandFailure(result, output, this.#requested, "read", this.#sandbox.limits);
  }

  async read(maxBytes: number): Promise<Buffer> {
    for (;;) {
      const first = this.#queue[0];
      if (first !== undefined) {
        if (first.length <= maxBytes) {
          this.#queue.shift();
          return first;
        }
        this.#queue[0] = first.subarray(maxBytes);
        return first.subarray(0, maxBytes);
      }
      if (this.#finished) {
        // Every byte of the command's output arrived before its result.
        if (this.#runError === undefined && this.#result?.exitCode === 0) return Buffer.alloc(0);
        throw this.#failure();
      }
      await this.#next();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.length = 0;
    // The rest of the file is not wanted: the engine kills the command.
    if (!this.#finished) this.#controller.abort();
  }
}

/**
 * The read tool's files in a sandboxed session: the path checked lexically against the view, then streamed
 * from a sandboxed `cat` that is stopped once the tool has what it needs.
 */
export function sandboxReadSource(sandbox: ToolSandbox, view: PathView): ReadSource {
  return async (requested, signal) => {
    if (signal?.aborted) throw aborted();
    const { viewPath } = locateInView(view, requested, "read");
    const file = new SandboxedReadableFile(sandbox, viewPath, requested);
    await file.start(signal);
    return file;
  };
}

/** A sandboxed file to edit, whole (at most `maxBytes`). */
async function loadInSandbox(
  sandbox: ToolSandbox,
  path: string,
  signal: AbortSignal | undefined,
  maxBytes: number,
): Promise<Buffer> {
  if (signal?.aborted) throw aborted();
  const splitter = new HeaderSplitter();
  const parts: Buffer[] = [];
  let bytes = 0;
  const result = await runFileCommand(sandbox, {
    script: fileCommand([path], editReadSteps(maxBytes)),
    signal,
    onStdout: (chunk) => {
      const body = splitter.push(chunk);
      if (body.length > 0 && bytes <= maxBytes) {
        parts.push(body);
        bytes += body.length;
      }
    },
  });
  if (result.exitCode !== 0 || result.aborted || result.timedOut) {
    const sized = splitter.header !== undefined && SIZE_HEADER.test(splitter.header);
    const output = sized ? Buffer.concat(parts).toString("utf8") : splitter.text;
    throw commandFailure(result, output, path, "read", sandbox.limits, maxBytes);
  }
  if (bytes > maxBytes) {
    // It grew past the limit after its size was taken.
    throw commandFailure({ ...result, exitCode: EXIT_TOO_LARGE }, "", path, "read", sandbox.limits, maxBytes);
  }
  return Buffer.concat(parts, bytes);
}

/** Writes `content` to a sandboxed file, making its directory first when `makeDirectory`. */
async function writeInSandbox(
  sandbox: ToolSandbox,
  path: string,
  content: string,
  signal: AbortSignal | undefined,
  makeDirectory: boolean,
): Promise<void> {
  if (signal?.aborted) throw aborted();
  let output = "";
  const result = await runFileCommand(sandbox, {
    script: fileCommand([path, makeDirectory ? posix.dirname(path) : ""], WRITE_STEPS),
    stdin: content,
    signal,
    onStdout: (chunk) => {
      if (output.length < 4096) output += chunk.toString("utf8");
    },
  });
  if (result.exitCode !== 0 || result.aborted || result.timedOut) {
    throw commandFailure(result, output, path, "write", sandbox.limits);
  }
}

/**
 * pi's write operations in a sandbox, for one call (`signal` is the call's). Paths are absolute in the view.
 * One sandboxed command per write: it makes the directory and writes the file.
 */
export function sandboxWriteOperations(
  sandbox: ToolSandbox,
  signal: AbortSignal | undefined,
): WriteOperations {
  return {
    // The write command makes the file's directory itself.
    mkdir: async () => {},
    writeFile: (path, content) => writeInSandbox(sandbox, path, content, signal, true),
  };
}

/**
 * pi's edit operations in a sandbox, for one call. `access` loads the file (checking it is a regular file,
 * readable and writable), `readFile` returns what was loaded, `writeFile` writes the result: two sandboxed
 * commands per edit.
 */
export function sandboxEditOperations(
  sandbox: ToolSandbox,
  signal: AbortSignal | undefined,
  maxBytes = MAX_EDIT_FILE_BYTES,
): EditOperations {
  let loaded: { readonly path: string; readonly bytes?: Buffer; readonly error?: unknown } | undefined;
  return {
    access: async (path) => {
      try {
        loaded = { path, bytes: await loadInSandbox(sandbox, path, signal, maxBytes) };
      } catch (error) {
        // Too large is said by `readFile`, which pi does not wrap in "Could not edit file".
        if ((error as FileToolError).code !== "EFBIG") throw error;
        loaded = { path, error };
      }
    },
    readFile: async (path) => {
      const cached = loaded?.path === path ? loaded : undefined;
      loaded = undefined;
      if (cached?.error !== undefined) throw cached.error;
      return cached?.bytes ?? loadInSandbox(sandbox, path, signal, maxBytes);
    },
    writeFile: (path, content) => writeInSandbox(sandbox, path, content, signal, false),
  };
}

/**
 * Removes a sandboxed file (a link at the path is removed itself, never what it points to); a directory, FIFO,
 * socket or device is refused, a missing file is ENOENT. One sandboxed command (`apply_patch`'s deletes).
 */
export async function sandboxRemoveFile(
  sandbox: ToolSandbox,
  path: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted) throw aborted();
  let output = "";
  const result = await runFileCommand(sandbox, {
    script: fileCommand(
      [path],
      [
        `[ -L "$1" ] || ${MISSING_STEP}`,
        `[ -L "$1" ] || [ -f "$1" ] || __kind "$1"`,
        `rm -f -- "$1" 2>&1 || exit ${EXIT_OPEN_FAILED}`,
      ],
    ),
    signal,
    onStdout: (chunk) => {
      if (output.length < 4096) output += chunk.toString("utf8");
    },
  });
  if (result.exitCode !== 0 || result.aborted || result.timedOut) {
    throw commandFailure(result, output, path, "write", sandbox.limits);
  }
}

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
