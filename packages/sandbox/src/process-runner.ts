// Running one engine process to its end. Owns: spawning it in a process group of its own, the wall-time,
// output and abort limits (each kills the whole group and is reported as such), feeding optional data
// descriptors (bwrap reads files such as /etc/passwd from them), and not waiting forever on pipes held open
// by a process that escaped the group. Does not own: what the process is (the engines build argv) or limits
// the kernel enforces inside the sandbox (rlimits, cgroups).
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import type { SandboxResult } from "./types.ts";

export interface ProcessSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Contents written to file descriptors 3, 4, ... of the process (then closed). */
  readonly dataFds?: readonly string[] | undefined;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal | undefined;
  readonly onData?: ((chunk: Buffer) => void) | undefined;
  /** Called once the process is gone or when it is killed: stop whatever else the command left (a cgroup). */
  readonly kill?: (() => void) | undefined;
}

/** After the process exits, how long its pipes may stay open (a background child holding them) before we stop reading. */
const PIPE_GRACE_MS = 200;

export function runProcess(spec: ProcessSpec): Promise<SandboxResult> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    if (spec.signal?.aborted) {
      resolvePromise({
        exitCode: null,
        signal: null,
        timedOut: false,
        aborted: true,
        outputLimited: false,
        outputBytes: 0,
        durationMs: 0,
      });
      return;
    }
    const extraFds = spec.dataFds ?? [];
    const child = spawn(spec.file, [...spec.args], {
      cwd: spec.cwd,
      env: { ...spec.env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe", ...extraFds.map(() => "pipe" as const)],
    });
    let timedOut = false;
    let aborted = false;
    let outputLimited = false;
    let outputBytes = 0;
    let settled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const killGroup = () => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      spec.kill?.();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    spec.signal?.addEventListener("abort", onAbort, { once: true });

    const onOutput = (chunk: Buffer) => {
      const room = spec.maxOutputBytes - outputBytes;
      outputBytes += chunk.length;
      if (room > 0) spec.onData?.(room >= chunk.length ? chunk : chunk.subarray(0, room));
      if (outputBytes > spec.maxOutputBytes && !outputLimited) {
        outputLimited = true;
        killGroup();
      }
    };
    child.stdout?.on("data", onOutput);
    child.stderr?.on("data", onOutput);
    extraFds.forEach((data, index) => {
      const stream = child.stdio[3 + index] as NodeJS.WritableStream | null;
      stream?.on("error", () => {});
      stream?.end(data);
    });

    const finish = () => {
      if (settled || exit === undefined) return;
      settled = true;
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      spec.signal?.removeEventListener("abort", onAbort);
      // Whatever the command left behind goes with it (a daemonised child of an unsandboxed command).
      killGroup();
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolvePromise({
        exitCode: exit.code,
        signal: exit.signal,
        timedOut,
        aborted,
        outputLimited,
        outputBytes,
        durationMs: performance.now() - started,
      });
    };
    child.once("error", (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onAbort);
      spec.kill?.();
      reject(error);
    });
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      graceTimer = setTimeout(finish, PIPE_GRACE_MS);
    });
    child.once("close", () => {
      if (exit === undefined) exit = { code: child.exitCode, signal: child.signalCode };
      finish();
    });
  });
}
