// Background commands of `exec`, kept per session for the `process` tool. Owns: starting a command through the
// session's sandbox engine (so a sandboxed session's background command runs in its sandbox, under its limits),
// each command's output in a ring buffer (the newest `maxOutputChars` characters; what was dropped is counted),
// its standard input (a stream the command reads as `process write` sends), the limits (running commands per
// session, finished ones kept, for how long), and killing: one command, a session's (`killSession`: its end),
// every command of the process (`killAllBackgroundProcesses`: the gateway's stop, and the process's exit); a
// session key that runs a turn with a new session id ended its old session (`noteSessionTurn`).
// Does not own: the tools' parameters and texts (exec-tool.ts, process-tool.ts) or containment (the engines).
import { randomBytes } from "node:crypto";
import { PassThrough } from "node:stream";
import type { SandboxResult } from "@agent-kernel/sandbox";
import type { ToolSandbox } from "./tool-sandbox.ts";

/** The registry's limits (`tools.exec` keys, OpenClaw's values where it has them). */
export interface ProcessLimits {
  /** Commands of one session running at once; one more is refused. */
  readonly maxRunning: number;
  /** Characters of output kept per command (the newest). */
  readonly maxOutputChars: number;
  /** How long a finished command is kept for `poll`/`log` (OpenClaw's `tools.exec.cleanupMs`). */
  readonly finishedTtlMs: number;
  /** Finished commands kept per session (the oldest go first). */
  readonly maxFinished: number;
}

/** The defaults: 8 running per session, 200 000 characters each, finished ones kept 30 minutes, at most 50. */
export const DEFAULT_PROCESS_LIMITS: ProcessLimits = {
  maxRunning: 8,
  maxOutputChars: 200_000,
  finishedTtlMs: 30 * 60 * 1000,
  maxFinished: 50,
};

/** Where a background command stands. */
export type ProcessStatus = "running" | "exited" | "killed" | "timed_out" | "failed";

/** A background command of a session. */
export class BackgroundProcess {
  readonly id: string;
  readonly command: string;
  readonly startedAt = Date.now();
  status: ProcessStatus = "running";
  exitCode: number | null = null;
  signal: string | null = null;
  endedAt: number | undefined;
  /** Why it failed (the engine could not start it), or what ended it. */
  note: string | undefined;
  /** Settles when the command ends, whatever way. */
  readonly done: Promise<void>;
  readonly #maxChars: number;
  #chunks: string[] = [];
  #kept = 0;
  /** Characters ever written, and of those dropped from the front of the buffer. */
  #total = 0;
  #dropped = 0;
  /** Where the last poll stopped (a character offset in everything ever written). */
  #pollCursor = 0;
  readonly #stdin = new PassThrough();
  readonly #controller = new AbortController();
  readonly #decoder = new TextDecoder();
  #waiters: (() => void)[] = [];

  constructor(id: string, command: string, maxChars: number, run: (io: ProcessIo) => Promise<SandboxResult>) {
    this.id = id;
    this.command = command;
    this.#maxChars = maxChars;
    this.done = run({
      stdin: this.#stdin,
      signal: this.#controller.signal,
      onData: (chunk) => this.#append(this.#decoder.decode(chunk, { stream: true })),
    }).then(
      (result) => {
        this.#append(this.#decoder.decode());
        this.exitCode = result.exitCode;
        this.signal = result.signal;
        if (result.aborted) this.status = "killed";
        else if (result.timedOut) this.status = "timed_out";
        else this.status = "exited";
        if (result.outputLimited)
          this.note = `killed: output passed the sandbox's limit (${result.outputBytes} bytes)`;
        this.#finish();
      },
      (error: unknown) => {
        this.status = "failed";
        this.note = error instanceof Error ? error.message : String(error);
        this.#finish();
      },
    );
  }

  get running(): boolean {
    return this.status === "running";
  }

  #finish(): void {
    this.endedAt = Date.now();
    this.#stdin.destroy();
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  #append(text: string): void {
    if (text === "") return;
    this.#chunks.push(text);
    this.#kept += text.length;
    this.#total += text.length;
    while (this.#kept > this.#maxChars) {
      const first = this.#chunks[0] ?? "";
      const over = this.#kept - this.#maxChars;
      if (first.length <= over) {
        this.#chunks.shift();
        this.#kept -= first.length;
        this.#dropped += first.length;
      } else {
        this.#chunks[0] = first.slice(over);
        this.#kept -= over;
        this.#dropped += over;
      }
    }
    this.#wake();
  }

  /** Everything kept, and how many characters before it were dropped. */
  output(): { text: string; dropped: number } {
    const text = this.#chunks.join("");
    this.#chunks = text === "" ? [] : [text];
    return { text, dropped: this.#dropped };
  }

  /** The output since the last poll (and how much of it was dropped before it could be read). */
  takeNew(): { text: string; missed: number } {
    const { text } = this.output();
    const start = Math.max(this.#pollCursor, this.#dropped);
    const missed = start - this.#pollCursor;
    this.#pollCursor = this.#total;
    return { text: text.slice(start - this.#dropped), missed };
  }

  /** Resolves when new output arrives, the command ends, or `ms` pass. */
  waitForChange(ms: number): Promise<void> {
    if (!this.running || this.#total > this.#pollCursor || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Sends text to the command's standard input; `eof` closes it after. */
  write(data: string, eof: boolean): void {
    if (!this.running) throw new Error(`process ${this.id} is not running (${this.status})`);
    if (this.#stdin.writableEnded) throw new Error(`process ${this.id}'s input is closed`);
    if (data !== "") this.#stdin.write(data);
    if (eof) this.#stdin.end();
  }

  /** Kills the command (its whole process group, or its sandbox). */
  kill(reason = "killed"): void {
    if (!this.running) return;
    this.note = reason;
    this.#controller.abort();
  }
}

/** What the registry gives the engine run of one command. */
export interface ProcessIo {
  readonly stdin: PassThrough;
  readonly signal: AbortSignal;
  readonly onData: (chunk: Buffer) => void;
}

/** One session's background commands. */
export class ProcessScope {
  readonly key: string;
  readonly limits: ProcessLimits;
  readonly #processes = new Map<string, BackgroundProcess>();

  constructor(key: string, limits: ProcessLimits) {
    this.key = key;
    this.limits = limits;
  }

  /** Commands kept, newest first; finished ones past their time (or count) are forgotten first. */
  list(): BackgroundProcess[] {
    this.#expire();
    return [...this.#processes.values()].reverse();
  }

  get(id: string): BackgroundProcess {
    this.#expire();
    const found = this.#processes.get(id);
    if (!found) {
      throw new Error(
        `no background process "${id}" in this session (process list shows the ones there are)`,
      );
    }
    return found;
  }

  /** Forgets a finished command. */
  remove(id: string): void {
    const found = this.get(id);
    if (found.running) throw new Error(`process ${id} is still running; kill it first`);
    this.#processes.delete(id);
  }

  /**
   * Starts `command` through the sandbox's engine, its output kept and its input open. Refused when the
   * session already runs `maxRunning` commands. `timeoutMs` 0: no time limit on the host (a sandbox keeps its own).
   */
  start(sandbox: ToolSandbox, command: string, timeoutMs: number): BackgroundProcess {
    this.#expire();
    const running = [...this.#processes.values()].filter((process) => process.running).length;
    if (running >= this.limits.maxRunning) {
      throw new Error(
        `this session already runs ${running} background processes (the limit); kill one with the process tool first`,
      );
    }
    const id = `proc_${randomBytes(4).toString("hex")}`;
    const hostTimeout = timeoutMs > 0 ? timeoutMs : 365 * 24 * 3600 * 1000;
    const limits = sandbox.sandboxed
      ? { ...sandbox.limits, timeoutMs: Math.min(hostTimeout, sandbox.limits.timeoutMs) }
      : { ...sandbox.limits, timeoutMs: hostTimeout, maxOutputBytes: Number.MAX_SAFE_INTEGER };
    const started = new BackgroundProcess(id, command, this.limits.maxOutputChars, (io) =>
      sandbox.engine.run({
        command,
        cwd: sandbox.cwd,
        env: sandbox.env,
        mounts: sandbox.mounts,
        network: sandbox.network,
        limits,
        signal: io.signal,
        onData: io.onData,
        stdin: io.stdin,
      }),
    );
    this.#processes.set(id, started);
    ensureExitHook();
    return started;
  }

  /** Kills every running command of the session; how many were running. */
  killAll(reason: string): number {
    let killed = 0;
    for (const process of this.#processes.values()) {
      if (process.running) {
        process.kill(reason);
        killed++;
      }
    }
    return killed;
  }

  get runningCount(): number {
    return [...this.#processes.values()].filter((process) => process.running).length;
  }

  #expire(): void {
    const now = Date.now();
    const finished = [...this.#processes.values()].filter((process) => !process.running);
    for (const process of finished) {
      if (now - (process.endedAt ?? now) > this.limits.finishedTtlMs) this.#processes.delete(process.id);
    }
    const left = finished.filter((process) => this.#processes.has(process.id));
    for (const process of left.slice(0, Math.max(0, left.length - this.limits.maxFinished))) {
      this.#processes.delete(process.id);
    }
  }
}

/** Every session's scope in this process. */
const scopes = new Map<string, ProcessScope>();

/** The key of a session's scope. */
export function processScopeKey(agentId: string, sessionId: string): string {
  return `${agentId}\u0000${sessionId}`;
}

/** The session's background commands (made on first use). */
export function processScopeFor(
  agentId: string,
  sessionId: string,
  limits = DEFAULT_PROCESS_LIMITS,
): ProcessScope {
  const key = processScopeKey(agentId, sessionId);
  let scope = scopes.get(key);
  if (scope === undefined) {
    scope = new ProcessScope(key, limits);
    scopes.set(key, scope);
  }
  return scope;
}

/**
 * The session ended (reset, deleted, or its gateway is letting it go): its background commands are killed and
 * forgotten. Returns how many were running.
 */
export function killSessionProcesses(agentId: string, sessionId: string): number {
  const key = processScopeKey(agentId, sessionId);
  const scope = scopes.get(key);
  if (scope === undefined) return 0;
  scopes.delete(key);
  return scope.killAll("the session ended");
}

/** The gateway stops: every background command of this process is killed. Returns how many were running. */
export function killAllBackgroundProcesses(reason = "the gateway stopped"): number {
  let killed = 0;
  for (const scope of scopes.values()) killed += scope.killAll(reason);
  scopes.clear();
  return killed;
}

/** The session id each session key last ran a turn with. */
const currentSessionIds = new Map<string, string>();

/**
 * A turn of `sessionKey` runs with `sessionId`: when the key had another session id before, that session ended
 * (a reset or an expiry gave the key a new session), and its background commands are killed. Returns how many.
 */
export function noteSessionTurn(agentId: string, sessionKey: string, sessionId: string): number {
  const key = `${agentId}\u0000${sessionKey}`;
  const previous = currentSessionIds.get(key);
  currentSessionIds.set(key, sessionId);
  if (previous === undefined || previous === sessionId) return 0;
  return killSessionProcesses(agentId, previous);
}

let exitHooked = false;
/** Background commands run in their own process groups: they would outlive the gateway without this. */
function ensureExitHook(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.once("exit", () => killAllBackgroundProcesses("the gateway exited"));
}
