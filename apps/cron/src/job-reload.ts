// Picking up edited jobs while a scheduler runs (`agent-kernel cron add|rm|enable|disable` rewrite the jobs
// file under a running gateway). Owns: what changed between two loads of the jobs, by id, and watching the
// jobs file by polling its stat (an editor or `cron add` replaces the file by rename, which an inode watch
// would lose). Does not own loading or checking jobs (jobs.ts) or their stored state (scheduler.ts).
import { type Stats, unwatchFile, watchFile } from "node:fs";
import type { ResolvedCronJob } from "./jobs.ts";

/** What a reload changed, by job id. */
export interface CronJobsReload {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Jobs whose definition changed in any way (prompt, delivery, agent, enabled, schedule…). */
  readonly changed: readonly string[];
  /** Of those, the ones whose schedule changed: their next slot comes from the new schedule. */
  readonly rescheduled: readonly string[];
}

const key = (resolved: ResolvedCronJob) => resolved.job.id.toLowerCase();
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The difference between two loads of the jobs (ids compared as the scheduler does, case-insensitively). */
export function diffJobs(
  previous: readonly ResolvedCronJob[],
  next: readonly ResolvedCronJob[],
): CronJobsReload {
  const before = new Map(previous.map((resolved) => [key(resolved), resolved]));
  const after = new Map(next.map((resolved) => [key(resolved), resolved]));
  const added: string[] = [];
  const changed: string[] = [];
  const rescheduled: string[] = [];
  for (const [id, resolved] of after) {
    const old = before.get(id);
    if (old === undefined) {
      added.push(resolved.job.id);
      continue;
    }
    if (!same(old.job, resolved.job) || old.agentId !== resolved.agentId) changed.push(resolved.job.id);
    if (!same(old.job.schedule, resolved.job.schedule)) rescheduled.push(resolved.job.id);
  }
  const removed = [...before].filter(([id]) => !after.has(id)).map(([, resolved]) => resolved.job.id);
  return { added, removed, changed, rescheduled };
}

/** True when a reload changed nothing. */
export function isEmptyReload(reload: CronJobsReload): boolean {
  return reload.added.length + reload.removed.length + reload.changed.length === 0;
}

/**
 * Calls `onChange` when the file at `path` appears, disappears or changes (size, mtime or inode), polling every
 * `intervalMs` without keeping the process alive. Returns the function that stops watching.
 */
export function watchJobsFile(path: string, intervalMs: number, onChange: () => void): () => void {
  const listener = (current: Stats, previous: Stats) => {
    if (
      current.mtimeMs !== previous.mtimeMs ||
      current.size !== previous.size ||
      current.ino !== previous.ino
    )
      onChange();
  };
  watchFile(path, { interval: intervalMs, persistent: false }, listener);
  return () => unwatchFile(path, listener);
}
