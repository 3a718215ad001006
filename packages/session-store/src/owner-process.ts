// Which process a pid stands for. Owns: reading a process's start time (field 22 `starttime` of
// /proc/<pid>/stat, clock ticks since boot) and this machine's boot id (/proc/sys/kernel/random/boot_id), and
// the rule that a recorded (pid, start time, boot id) is no longer the process now at that pid. Off Linux (or
// with /proc hidden) nothing is read and a pid alone decides. Does not own: whether the pid exists
// (runs.ts probes it) or which stores own runs (runs.ts).
import { readFileSync } from "node:fs";

/** When a process started: clock ticks since boot, and the boot it started in. */
export interface ProcessStart {
  readonly startTime: number;
  readonly bootId: string;
}

/** What an owner recorded about its process; both absent on rows written before start times were kept. */
export interface RecordedProcessStart {
  readonly startTime?: number | undefined;
  readonly bootId?: string | undefined;
}

let bootIdCache: string | null | undefined;

/** This machine's boot id, or undefined where it cannot be read (not Linux). Read once per process. */
export function currentBootId(): string | undefined {
  if (bootIdCache === undefined) {
    try {
      const id = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
      bootIdCache = id === "" ? null : id;
    } catch {
      bootIdCache = null;
    }
  }
  return bootIdCache ?? undefined;
}

/**
 * `starttime` (field 22) of a /proc/<pid>/stat line. The command name (field 2) is in parentheses and may hold
 * spaces and parentheses itself, so fields are counted from the last `)`.
 */
export function parseStatStartTime(stat: string): number | undefined {
  const close = stat.lastIndexOf(")");
  if (close < 0) return undefined;
  // After ")": field 3 (state) is at index 0, so field 22 is at index 19.
  const field = stat
    .slice(close + 1)
    .trim()
    .split(/\s+/)[19];
  if (field === undefined || !/^\d+$/.test(field)) return undefined;
  const ticks = Number(field);
  return Number.isSafeInteger(ticks) ? ticks : undefined;
}

/** The start of the process now at `pid`, or undefined when it cannot be read (gone, not Linux, hidden). */
export function readProcessStart(pid: number): ProcessStart | undefined {
  const bootId = currentBootId();
  if (bootId === undefined || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const startTime = parseStatStartTime(stat);
  return startTime === undefined ? undefined : { startTime, bootId };
}

let ownStartCache: ProcessStart | null | undefined;

/** This process's start, read once; undefined where it cannot be read. */
export function ownProcessStart(): ProcessStart | undefined {
  if (ownStartCache === undefined) ownStartCache = readProcessStart(process.pid) ?? null;
  return ownStartCache ?? undefined;
}

/**
 * Whether the process recorded as `recorded` is provably not the one now at its pid: it started in another
 * boot, or the pid's process started at another time (the pid was reused). `now` is what the pid holds now
 * (undefined: unreadable or gone) and `bootId` this machine's boot id (`currentBootId()`). Unknown on either side — an old row, another OS, /proc hidden — is not
 * proof: the caller's pid probe decides alone.
 */
export function isOtherProcess(
  recorded: RecordedProcessStart,
  now: ProcessStart | undefined,
  bootId: string | undefined,
): boolean {
  if (recorded.bootId !== undefined && bootId !== undefined && recorded.bootId !== bootId) return true;
  if (recorded.startTime === undefined || now === undefined) return false;
  return now.startTime !== recorded.startTime;
}
