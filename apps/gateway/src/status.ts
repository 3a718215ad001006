// What `status` reports: whether a gateway runs on the state dir (its pid file and a live process), what the
// daemon last wrote about itself (channels and what they serve, active runs, cron jobs), and the follow-up
// queue's depth read from the store itself. Owns gathering and formatting that; does not own the files'
// shapes (state-files.ts).
import { defaultAgentId, type KernelConfig, listAgentIds } from "@agent-kernel/config";
import { type GatewaySnapshot, processAlive, readPid, readSnapshot } from "./state-files.ts";

/** The gateway's status as `status --json` prints it. */
export interface GatewayStatus {
  readonly running: boolean;
  readonly pid?: number;
  readonly stateDir: string;
  readonly startedAt?: string;
  /** When the daemon last rewrote its snapshot. */
  readonly updatedAt?: string;
  readonly channels: GatewaySnapshot["channels"];
  readonly activeRuns: GatewaySnapshot["activeRuns"];
  readonly cron?: GatewaySnapshot["cron"];
  readonly queue: { readonly pending: number; readonly claimed: number };
}

/** Gathers the status; the store is opened through the kernel's admin entry (no pi) and closed again. */
export async function gatewayStatus(config: KernelConfig, stateDir: string): Promise<GatewayStatus> {
  const pid = readPid(stateDir);
  const running = pid !== undefined && processAlive(pid);
  const snapshot = running ? readSnapshot(stateDir) : undefined;
  const queue = { pending: 0, claimed: 0 };
  const { openKernelStore } = await import("@agent-kernel/kernel/admin");
  const store = await openKernelStore({ stateDir });
  try {
    for (const agentId of new Set([...listAgentIds(config), defaultAgentId(config)])) {
      queue.pending += (await store.queue.list({ agentId, status: "pending" })).length;
      queue.claimed += (await store.queue.list({ agentId, status: "claimed" })).length;
    }
  } finally {
    await store.close();
  }
  return {
    running,
    ...(running && pid !== undefined ? { pid } : {}),
    stateDir,
    ...(snapshot === undefined ? {} : { startedAt: snapshot.startedAt, updatedAt: snapshot.updatedAt }),
    channels: snapshot?.channels ?? [],
    activeRuns: snapshot?.activeRuns ?? [],
    ...(snapshot === undefined ? {} : { cron: snapshot.cron }),
    queue,
  };
}

/** The status as a few lines of text. */
export function formatStatus(status: GatewayStatus): string {
  const lines = [
    status.running
      ? `gateway: running (pid ${status.pid}, since ${status.startedAt ?? "?"})`
      : `gateway: not running on ${status.stateDir}`,
  ];
  for (const channel of status.channels) {
    lines.push(
      `channel ${channel.id}:${channel.accountId}${channel.serves.length > 0 ? ` — ${channel.serves.join("; ")}` : ""}`,
    );
  }
  lines.push(`follow-up queue: ${status.queue.pending} pending, ${status.queue.claimed} claimed`);
  lines.push(`active runs: ${status.activeRuns.length}`);
  for (const run of status.activeRuns) lines.push(`  ${run.runId} ${run.sessionKey} (${run.phase})`);
  if (status.cron !== undefined)
    lines.push(
      `cron: ${status.cron.jobs} job(s)${status.cron.running.length > 0 ? `, running: ${status.cron.running.join(", ")}` : ""}`,
    );
  return `${lines.join("\n")}\n`;
}
