// The gateway's files beside the store: the pid file that is also its lock (one gateway per state dir) and
// the status snapshot the daemon rewrites while it runs (channels and what they serve, active runs, cron
// jobs), which `status` reads. Owns their paths, the atomic writes and deciding whether the daemon is alive.
// Does not own what goes into the snapshot (daemon.ts).
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The gateway's directory under the state dir. */
export function gatewayDir(stateDir: string): string {
  return join(stateDir, "gateway");
}

export function pidFilePath(stateDir: string): string {
  return join(gatewayDir(stateDir), "gateway.pid");
}

export function statusFilePath(stateDir: string): string {
  return join(gatewayDir(stateDir), "status.json");
}

/** What the running daemon last wrote about itself. */
export interface GatewaySnapshot {
  readonly pid: number;
  readonly startedAt: string;
  readonly updatedAt: string;
  readonly channels: readonly {
    readonly id: string;
    readonly accountId: string;
    readonly serves: readonly string[];
  }[];
  readonly activeRuns: readonly {
    readonly runId: string;
    readonly sessionKey: string;
    readonly phase: string;
    readonly entryPoint?: string;
  }[];
  readonly cron: { readonly jobs: number; readonly running: readonly string[] };
}

/** Whether a process with this id exists (signal 0: no signal is sent). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid in the pid file, if there is one. */
export function readPid(stateDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(pidFilePath(stateDir), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export class GatewayLockedError extends Error {
  readonly pid: number;
  constructor(pid: number, stateDir: string) {
    super(`another gateway is running on ${stateDir} (pid ${pid}); stop it first (kill -TERM ${pid})`);
    this.name = "GatewayLockedError";
    this.pid = pid;
  }
}

/**
 * Takes the lock: writes this process's pid, unless a live gateway holds it (then GatewayLockedError). A pid
 * file left by a dead process is replaced. Returns the release function.
 */
export function acquirePidLock(stateDir: string): () => void {
  mkdirSync(gatewayDir(stateDir), { recursive: true });
  const path = pidFilePath(stateDir);
  for (let tries = 0; ; tries++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || tries > 0) throw error;
      const holder = readPid(stateDir);
      if (holder !== undefined && holder !== process.pid && processAlive(holder))
        throw new GatewayLockedError(holder, stateDir);
      rmSync(path, { force: true });
    }
  }
  return () => {
    if (readPid(stateDir) === process.pid) rmSync(path, { force: true });
    rmSync(statusFilePath(stateDir), { force: true });
  };
}

export function writeSnapshot(stateDir: string, snapshot: GatewaySnapshot): void {
  const path = statusFilePath(stateDir);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(snapshot, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

export function readSnapshot(stateDir: string): GatewaySnapshot | undefined {
  try {
    return JSON.parse(readFileSync(statusFilePath(stateDir), "utf8")) as GatewaySnapshot;
  } catch {
    return undefined;
  }
}
