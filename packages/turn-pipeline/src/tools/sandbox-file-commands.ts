// The shell commands a sandboxed session's file tools run through its engine: quoting, the read, edit-read and
// write scripts with their exit codes, the limits and environment they run under, and turning a failed
// command's exit code and output back into a clear error. Owns: those scripts and their failure mapping. Does
// not own: streaming a read or the pi operations built on them (sandbox-file-operations.ts) or containment
// (the engines).

import type { SandboxLimits, SandboxResult } from "@agent-kernel/sandbox";
import { formatSize } from "@earendil-works/pi-coding-agent";
import { aborted, FileToolError, MAX_EDIT_FILE_BYTES } from "./file-tool-basics.ts";
import type { ToolSandbox } from "./tool-sandbox.ts";

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
export const EXIT_OPEN_FAILED = 47;
const EXIT_MKDIR_FAILED = 48;
export const EXIT_TOO_LARGE = 49;
/** SIGXFSZ: the sandbox's file size limit (`ulimit -f`) stopped the write. */
const EXIT_FILE_SIZE_LIMIT = 128 + 25;

/**
 * What every file command starts with: its arguments as `$1`, `$2` (quoted: never part of the shell text
 * unquoted), and `__kind`, which exits with the code of what a path names when it is not a regular file.
 * Messages of failed steps go to standard output (`2>&1`), before any content: the command's standard error
 * also carries the shell's own noise, which is not the model's business.
 */
export function fileCommand(args: readonly string[], steps: readonly string[]): string {
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
export const MISSING_STEP = `[ -e "$1" ] || { stat -L -- "$1" 2>&1 >/dev/null; exit ${EXIT_MISSING}; }`;

/**
 * Streams a regular file: its size on the first line, then its bytes. The checks before opening refuse what
 * is not a regular file at once; opening reads (bash's `<`) could still wait on a FIFO swapped in after them,
 * until the wall time — the open descriptor is checked again, so nothing but a regular file is ever read.
 */
export const READ_STEPS = [
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
export function editReadSteps(maxBytes: number): string[] {
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
export const WRITE_STEPS = [
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

export function runFileCommand(sandbox: ToolSandbox, run: FileCommandRun): Promise<SandboxResult> {
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
export function commandFailure(
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
export class HeaderSplitter {
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
