// The sandbox's public shapes: a command to run (what it sees, what it may use), its result, and the one small
// interface every engine implements. Owns only shapes; the engines (bwrap-engine.ts, host-engine.ts) own
// behaviour. Does not own deciding whether a session is sandboxed (runtime-resolver) or the tools that use it.

/** A host directory as the command sees it. */
export interface SandboxMount {
  /** Absolute path inside the sandbox, e.g. `/workspace`. */
  readonly path: string;
  /** Absolute path on the host. */
  readonly hostPath: string;
  readonly writable: boolean;
}

/** What one command may use. Every limit is enforced by the engine, not asked of the command. */
export interface SandboxLimits {
  /** Wall time; the whole command (every process it started) is killed at this point. */
  readonly timeoutMs: number;
  /** Bytes of stdout + stderr; past this the command is killed and the output kept so far returned. */
  readonly maxOutputBytes: number;
  /** Address space of each process (bytes). */
  readonly memoryBytes: number;
  /** Processes of the command at once. */
  readonly maxProcesses: number;
  /** Largest file a process may write (bytes). */
  readonly maxFileBytes: number;
  /** Size of the private memory-backed /tmp (bytes). */
  readonly tmpBytes: number;
}

/** One command for an engine to run: the bash command line, its cwd, environment, mounts, network and limits. */
export interface SandboxCommand {
  /** A bash command line, run as `bash -c <command>`. */
  readonly command: string;
  /** Working directory as the command sees it (inside a mount). */
  readonly cwd: string;
  /** The command's whole environment (scrub it first: `scrubEnvironment`). */
  readonly env: Readonly<Record<string, string>>;
  readonly mounts: readonly SandboxMount[];
  /** False: no network but a private loopback. */
  readonly network: boolean;
  readonly limits: SandboxLimits;
  readonly signal?: AbortSignal | undefined;
  /** Output as it arrives (stdout and stderr interleaved), up to `maxOutputBytes`. */
  readonly onData?: ((chunk: Buffer) => void) | undefined;
  /** Only the command's standard output (`onData` gets both); for callers that need the two apart. */
  readonly onStdout?: ((chunk: Buffer) => void) | undefined;
  /**
   * What the command reads on its standard input; absent: end of file at once. A stream is piped to the
   * command as it arrives (a background process the caller writes to), its end closing the command's input.
   */
  readonly stdin?: string | Uint8Array | NodeJS.ReadableStream | undefined;
}

/** What a command is started with, but its text: the settings a sandbox (and a standby) is made for. */
export type SandboxSettings = Omit<SandboxCommand, "command" | "signal" | "onData" | "onStdout" | "stdin">;

/** How a command ended. Exactly one of `exitCode` / `signal` is set unless the engine failed to start. */
export interface SandboxResult {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Killed at `limits.timeoutMs`. */
  readonly timedOut: boolean;
  /** Killed because the caller's signal aborted. */
  readonly aborted: boolean;
  /** Killed because the output passed `limits.maxOutputBytes`. */
  readonly outputLimited: boolean;
  /** Every byte the command wrote (including what was cut). */
  readonly outputBytes: number;
  readonly durationMs: number;
}

/** How the process limit is enforced on this machine. */
export type ProcessLimitEnforcement =
  /** A pids cgroup per command (needed when the gateway runs as root: root ignores RLIMIT_NPROC). */
  | "cgroup"
  /** RLIMIT_NPROC inside a fresh user namespace: counts only the command's processes. */
  | "rlimit"
  /** Not enforced (root without a writable pids cgroup): a fork bomb is only stopped by the wall time. */
  | "none";

/** Whether an engine can run here, and how. */
export type EngineStatus =
  | {
      readonly available: true;
      readonly engine: string;
      readonly version: string;
      readonly processLimit: ProcessLimitEnforcement;
      /**
       * "cgroup": a memory cgroup per command bounds everything it holds (processes, /tmp, /dev/shm, memfd);
       * "rlimit": only each process's address space is bounded.
       */
      readonly memoryLimit: "cgroup" | "rlimit";
      /** Things that work but are weaker than the defaults promise (e.g. no process limit). */
      readonly warnings: readonly string[];
    }
  | {
      readonly available: false;
      readonly engine: string;
      /** What failed, in one sentence. */
      readonly problem: string;
      /** How to fix it (the package to install, the setting to change). */
      readonly fix: string;
    };

/** Runs commands contained. `host` is the no-sandbox engine: same interface, only env, time and output bounded. */
export interface SandboxEngine {
  readonly name: "bwrap" | "host";
  /** Checks the engine can start a command here (cached by the engine; `fresh` probes again). */
  probe(options?: { readonly fresh?: boolean }): Promise<EngineStatus>;
  /**
   * Throws `SandboxUnavailableError` when commands of these settings cannot run (e.g. a root gateway's
   * sandbox whose working directory belongs to root), so a caller can refuse before it starts anything.
   */
  check(settings: SandboxSettings): void;
  /** Runs one command. Rejects only when the engine itself cannot start (`SandboxUnavailableError`). */
  run(command: SandboxCommand): Promise<SandboxResult>;
}

/** The engine could not start a command: nothing ran. */
export class SandboxUnavailableError extends Error {
  override readonly name = "SandboxUnavailableError";
  readonly engine: string;
  readonly problem: string;
  readonly fix: string;
  constructor(engine: string, problem: string, fix: string) {
    super(`sandbox engine "${engine}" is unavailable: ${problem}. To fix: ${fix}.`);
    this.engine = engine;
    this.problem = problem;
    this.fix = fix;
  }
}
