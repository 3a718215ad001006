// Running one engine process to its end. Owns: spawning it in a process group of its own, feeding optional
// data descriptors (bwrap reads files such as /etc/passwd from them), bwrap's start gate (its namespace
// child's pid reported, then released), starting a process ahead of its command (the command's text is
// written to a descriptor when it is run), the wall-time, output and abort limits (each kills the whole
// group and is reported as such), and not waiting forever on pipes held open by a process that escaped the
// group. Does not own: what the process is (the engines build argv) or limits enforced inside the sandbox
// (rlimits, cgroups).
import { type ChildProcess, spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import type { SandboxResult } from "./types.ts";

export interface StartSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Contents written to file descriptors 3, 4, ... of the process (then closed); a gap leaves that pipe alone. */
  readonly dataFds?: readonly (string | Uint8Array | undefined)[] | undefined;
  /**
   * The descriptor (3 + `inputIndex`) the process reads its command from; `run` writes the command there.
   * Absent: the command is in the argv and the process runs at once.
   */
  readonly inputIndex?: number | undefined;
  /**
   * bwrap's start gate: it reports its namespace child's pid on the info descriptor (3 + `infoIndex`) and
   * waits on the block descriptor (3 + `blockIndex`) before running anything; `onChild` runs in between (it
   * moves the child into the command's cgroup, so every process of the command is born there; a cgroup
   * move can take milliseconds, so it may be async and the event loop goes on meanwhile). A throw or
   * rejection kills the process and fails the run.
   */
  readonly gate?:
    | {
        readonly infoIndex: number;
        readonly blockIndex: number;
        readonly onChild: (pid: number) => void | Promise<void>;
      }
    | undefined;
  /** Called when the process is killed or gone: stop whatever else the command left (a cgroup). */
  readonly kill?: (() => void) | undefined;
  /** Open descriptors the process gets after the extra pipes (3 + pipes + index); the caller closes its own. */
  readonly inheritFds?: readonly number[] | undefined;
  /** Run as this user and group (the gateway must be root). */
  readonly uid?: number | undefined;
  readonly gid?: number | undefined;
}

export interface RunSpec {
  /** The command's text, for a process started with `inputIndex`. */
  readonly input?: string | undefined;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal | undefined;
  readonly onData?: ((chunk: Buffer) => void) | undefined;
  readonly onStdout?: ((chunk: Buffer) => void) | undefined;
  /** What the command reads on its standard input (then end of file), or a stream piped to it; absent: end of file at once. */
  readonly stdin?: string | Uint8Array | NodeJS.ReadableStream | undefined;
}

/** After the process exits, how long its pipes may stay open (a background child holding them) before we stop reading. */
const PIPE_GRACE_MS = 200;

/** A spawned process, waiting for `run` (once). */
export class StartedProcess {
  readonly #spec: StartSpec;
  readonly #child: ChildProcess;
  readonly #early: { chunk: Buffer; stdout: boolean }[] = [];
  #onOutput: ((chunk: Buffer, stdout: boolean) => void) | undefined;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #closed = false;
  #startError: Error | undefined;
  #spawnError: Error | undefined;
  #settle: (() => void) | undefined;
  #graceTimer: NodeJS.Timeout | undefined;
  #used = false;

  constructor(spec: StartSpec) {
    this.#spec = spec;
    const extraFds = spec.dataFds ?? [];
    const gate = spec.gate;
    const extraCount = Math.max(
      extraFds.length,
      gate ? Math.max(gate.infoIndex, gate.blockIndex) + 1 : 0,
      spec.inputIndex === undefined ? 0 : spec.inputIndex + 1,
    );
    const child = spawn(spec.file, [...spec.args], {
      cwd: spec.cwd,
      env: { ...spec.env },
      detached: true,
      ...(spec.uid === undefined ? {} : { uid: spec.uid }),
      ...(spec.gid === undefined ? {} : { gid: spec.gid }),
      // stdin is a pipe so that `run` can give the command data; it is closed at once when there is none.
      stdio: [
        "pipe",
        "pipe",
        "pipe",
        ...Array.from({ length: extraCount }, () => "pipe" as const),
        ...(spec.inheritFds ?? []),
      ],
    });
    this.#child = child;
    const output = (chunk: Buffer, stdout: boolean) => {
      if (this.#onOutput) this.#onOutput(chunk, stdout);
      else this.#early.push({ chunk, stdout });
    };
    child.stdin?.on("error", () => {});
    child.stdout?.on("data", (chunk: Buffer) => output(chunk, true));
    child.stderr?.on("data", (chunk: Buffer) => output(chunk, false));
    extraFds.forEach((data, index) => {
      if (data === undefined) return;
      const stream = child.stdio[3 + index] as NodeJS.WritableStream | null;
      stream?.on("error", () => {});
      stream?.end(data);
    });
    if (spec.inputIndex !== undefined) {
      (child.stdio[3 + spec.inputIndex] as NodeJS.WritableStream | null)?.on("error", () => {});
    }
    if (gate !== undefined) this.#openGate(gate);
    child.once("error", (error) => {
      this.#spawnError = error;
      this.#exit ??= { code: null, signal: null };
      this.#closed = true;
      spec.kill?.();
      this.#settle?.();
    });
    child.once("exit", (code, signal) => {
      this.#exit = { code, signal };
      this.#graceTimer = setTimeout(() => {
        this.#closed = true;
        this.#settle?.();
      }, PIPE_GRACE_MS);
    });
    child.once("close", () => {
      this.#exit ??= { code: child.exitCode, signal: child.signalCode };
      this.#closed = true;
      this.#settle?.();
    });
  }

  /** Whether the process is gone before it ran anything (a standby that died is not used). */
  get exited(): boolean {
    return this.#exit !== undefined;
  }

  #openGate(gate: NonNullable<StartSpec["gate"]>): void {
    const info = this.#child.stdio[3 + gate.infoIndex] as NodeJS.ReadableStream | null;
    const block = this.#child.stdio[3 + gate.blockIndex] as NodeJS.WritableStream | null;
    block?.on("error", () => {});
    let text = "";
    let opened = false;
    info?.setEncoding("utf8");
    info?.on("data", (chunk: string) => {
      if (opened) return;
      text += chunk;
      const match = /"child-pid":\s*(\d+)/.exec(text);
      if (!match) return;
      opened = true;
      Promise.resolve()
        .then(() => gate.onChild(Number(match[1])))
        .then(
          () => block?.end("1"),
          (error: unknown) => {
            this.#startError = error instanceof Error ? error : new Error(String(error));
            this.kill();
          },
        );
    });
  }

  /**
   * While it waits for `run`, the process does not keep the event loop alive (a standby must not hold a
   * finished program open); `run` holds it again.
   */
  unrefWhileWaiting(): void {
    if (this.#used) return;
    this.#child.unref();
    for (const stream of this.#child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
  }

  #ref(): void {
    this.#child.ref();
    for (const stream of this.#child.stdio) (stream as { ref?: () => void } | null)?.ref?.();
  }

  /** Kills the whole process group (and whatever `kill` of the spec stops). */
  kill(): void {
    const pid = this.#child.pid;
    if (pid !== undefined) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    this.#spec.kill?.();
  }

  /** Sends the command (if any) and waits for the process to end under the run's limits. */
  run(spec: RunSpec): Promise<SandboxResult> {
    if (this.#used) throw new Error("a started process runs one command");
    this.#used = true;
    this.#ref();
    const started = performance.now();
    const child = this.#child;
    return new Promise((resolvePromise, reject) => {
      let timedOut = false;
      let aborted = false;
      let outputLimited = false;
      let outputBytes = 0;
      let settled = false;
      const onOutput = (chunk: Buffer, stdout: boolean) => {
        const room = spec.maxOutputBytes - outputBytes;
        outputBytes += chunk.length;
        if (room > 0) {
          const kept = room >= chunk.length ? chunk : chunk.subarray(0, room);
          spec.onData?.(kept);
          if (stdout) spec.onStdout?.(kept);
        }
        if (outputBytes > spec.maxOutputBytes && !outputLimited) {
          outputLimited = true;
          this.kill();
        }
      };
      for (const { chunk, stdout } of this.#early.splice(0)) onOutput(chunk, stdout);
      this.#onOutput = onOutput;
      const timer = setTimeout(() => {
        timedOut = true;
        this.kill();
      }, spec.timeoutMs);
      const onAbort = () => {
        aborted = true;
        this.kill();
      };
      if (spec.signal?.aborted) onAbort();
      else spec.signal?.addEventListener("abort", onAbort, { once: true });

      this.#settle = () => {
        if (settled || !this.#closed || this.#exit === undefined) return;
        settled = true;
        clearTimeout(timer);
        if (this.#graceTimer) clearTimeout(this.#graceTimer);
        spec.signal?.removeEventListener("abort", onAbort);
        // Whatever the command left behind goes with it (a daemonised child of an unsandboxed command).
        this.kill();
        for (const stream of child.stdio) stream?.destroy();
        const error = this.#spawnError ?? this.#startError;
        if (error !== undefined) {
          reject(error);
          return;
        }
        resolvePromise({
          exitCode: this.#exit.code,
          signal: this.#exit.signal,
          timedOut,
          aborted,
          outputLimited,
          outputBytes,
          durationMs: performance.now() - started,
        });
      };
      if (spec.stdin !== undefined && !aborted && typeof spec.stdin === "object" && "pipe" in spec.stdin) {
        if (child.stdin) spec.stdin.pipe(child.stdin);
      } else if (spec.stdin !== undefined && !aborted) child.stdin?.end(spec.stdin as string | Uint8Array);
      else child.stdin?.end();
      if (this.#spec.inputIndex !== undefined && !aborted) {
        const input = child.stdio[3 + this.#spec.inputIndex] as NodeJS.WritableStream | null;
        input?.end(`${spec.input ?? ""}\u0000`);
      }
      this.#settle();
    });
  }
}

/** Starts a process and runs it at once: the one-shot form. */
export function runProcess(spec: StartSpec & RunSpec): Promise<SandboxResult> {
  if (spec.signal?.aborted) {
    return Promise.resolve({
      exitCode: null,
      signal: null,
      timedOut: false,
      aborted: true,
      outputLimited: false,
      outputBytes: 0,
      durationMs: 0,
    });
  }
  return new StartedProcess(spec).run(spec);
}
