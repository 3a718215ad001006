// The file tools' operations in a sandboxed session: the read tool's source (a file's bytes streamed from a
// sandboxed command), pi's `WriteOperations` / `EditOperations`, and removing a file — every access a short
// command run by the session's engine, so paths resolve inside the sandbox's mount namespace as its user.
// Owns: those operations. Does not own: the commands' scripts (sandbox-file-commands.ts), the lexical view
// check (file-tool-basics.ts) or what the tools do with the bytes (pi, read-tool.ts).

import { posix } from "node:path";
import type { SandboxResult } from "@agent-kernel/sandbox";
import type { EditOperations, WriteOperations } from "@earendil-works/pi-coding-agent";
import { aborted, type FileToolError, locateInView, MAX_EDIT_FILE_BYTES } from "./file-tool-basics.ts";
import type { PathView } from "./path-view.ts";
import type { ReadableFile, ReadSource } from "./read-tool.ts";
import {
  commandFailure,
  EXIT_OPEN_FAILED,
  EXIT_TOO_LARGE,
  editReadSteps,
  fileCommand,
  HeaderSplitter,
  MISSING_STEP,
  READ_STEPS,
  runFileCommand,
  WRITE_STEPS,
} from "./sandbox-file-commands.ts";
import type { ToolSandbox } from "./tool-sandbox.ts";

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
