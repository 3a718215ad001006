// A child process for src/lease-conformance.test.ts: one process of the cross-process lane, on either store.
//   worker <store> <name> <turns> <log>: runs `turns` turns on one session key, each under its lease: acquire
//     (waiting), load the transcript fenced by the lease, start a run, append three entries at the leaf with
//     short pauses, flush, finish the run, release. Appends "start <name> <turn> <token>" and "end …" lines to
//     <log> (O_APPEND: the file's order is the order the turns really ran in). Prints "ready", waits for "go".
//   holder <store> <name> <ttlMs>: takes the lease, starts a run, appends and flushes one entry, prints
//     "held <token>", then on each "write" line appends one more entry and finishes the run, printing "wrote"
//     or "refused <error name>", then "run finished" or "run refused <error name>".
// <store> is `sqlite:<stateDir>` or `postgres:<schema>:<connectionString>`.
//   node --conditions=@agent-kernel/source test/child/lane-child.ts worker sqlite:/tmp/x a 8 /tmp/log
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import type { LeasingSessionStore } from "../../src/leases.ts";
import { openSessionStore } from "../../src/store.ts";

const [mode = "", spec = "", name = "", ...rest] = process.argv.slice(2);
const KEY = "agent:main:main";
const SESSION = "lane-session";
const HEADER = {
  type: "session",
  version: 3,
  id: SESSION,
  timestamp: new Date(0).toISOString(),
  cwd: "/work",
} as const;

async function openStore(): Promise<LeasingSessionStore> {
  if (spec.startsWith("sqlite:")) return openSessionStore({ stateDir: spec.slice("sqlite:".length) });
  const [, schema = "", ...connection] = spec.split(":");
  const { openPostgresSessionStore } = await import("../../src/postgres/store.ts");
  return openPostgresSessionStore({ connectionString: connection.join(":"), schema, maxConnections: 3 });
}

const store = await openStore();
const lines = createInterface({ input: process.stdin });

if (mode === "worker") {
  const [turnsText = "0", log = ""] = rest;
  process.stdout.write("ready\n");
  for await (const line of lines) if (line === "go") break;
  for (let turn = 0; turn < Number(turnsText); turn++) {
    const lease = await store.leases.acquire(KEY, name, 30_000, { waitMs: 120_000, pollMs: 5 });
    if (lease === undefined) throw new Error(`${name}: no lease for turn ${turn}`);
    appendFileSync(log, `start ${name} ${turn} ${lease.token}\n`);
    await store.loadTranscript("main", SESSION, { lease });
    const transcript = store.openTranscript("main", SESSION, { header: HEADER });
    const runs = store.fencedRuns(lease);
    const runId = `${name}-${turn}`;
    await runs.start({
      runId,
      agentId: "main",
      sessionKey: KEY,
      sessionId: SESSION,
      entryPoint: "lane-test",
    });
    for (let step = 0; step < 3; step++) {
      transcript.append({
        type: "custom",
        id: `${runId}-${step}`,
        parentId: transcript.getLeafId(),
        timestamp: new Date().toISOString(),
        customType: "turn",
        data: { name, turn, step, token: lease.token },
      });
      await sleep(1 + Math.floor(Math.random() * 3));
    }
    // Stored for other processes to read before the lease goes (SQLite: folds the journaled appends).
    await store.flush();
    await runs.finish(runId, { status: "succeeded" });
    appendFileSync(log, `end ${name} ${turn} ${lease.token}\n`);
    await store.leases.release(lease);
  }
  lines.close();
  await store.close();
  process.stdout.write("done\n");
} else if (mode === "holder") {
  const [ttlText = "1000"] = rest;
  const lease = await store.leases.acquire(KEY, name, Number(ttlText), { waitMs: 60_000, pollMs: 10 });
  if (lease === undefined) throw new Error("no lease");
  await store.loadTranscript("main", SESSION, { lease });
  const transcript = store.openTranscript("main", SESSION, { header: HEADER });
  const runs = store.fencedRuns(lease);
  const runId = `${name}-run`;
  await runs.start({ runId, agentId: "main", sessionKey: KEY, sessionId: SESSION, entryPoint: "lane-test" });
  const entry = (id: string) => ({
    type: "custom",
    id,
    parentId: transcript.getLeafId(),
    timestamp: new Date().toISOString(),
    data: { name, token: lease.token },
  });
  transcript.append(entry(`${name}-first`));
  await store.flush();
  process.stdout.write(`held ${lease.token}\n`);
  for await (const line of lines) {
    if (line !== "write") continue;
    try {
      transcript.append(entry(`${name}-late`));
      await store.flush();
      process.stdout.write("wrote\n");
    } catch (error) {
      process.stdout.write(`refused ${error instanceof Error ? error.name : String(error)}\n`);
    }
    try {
      await runs.finish(runId, { status: "succeeded" });
      process.stdout.write("run finished\n");
    } catch (error) {
      process.stdout.write(`run refused ${error instanceof Error ? error.name : String(error)}\n`);
    }
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
