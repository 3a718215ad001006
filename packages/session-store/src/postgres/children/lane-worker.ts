// A child process for ../two-process.test.ts: runs `turns` turns on one session key, each under the session's
// lease: acquire (waiting), load the transcript fenced by the lease, start a run, append three entries at the
// leaf with short pauses, flush, finish the run, release. Each turn's interval (database clock) and token go
// into `turn_log`. Prints "ready", waits for "go" on stdin, prints "done".
//   node --conditions=@agent-kernel/source src/postgres/children/lane-worker.ts <connectionString> <schema> <worker> <turns>
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { openPostgresSessionStore } from "../store.ts";

const [connectionString = "", schema = "", worker = "", turnsText = "0"] = process.argv.slice(2);
const KEY = "agent:main:main";
const SESSION = "lane-session";
const store = await openPostgresSessionStore({ connectionString, schema, maxConnections: 3 });
const lines = createInterface({ input: process.stdin });
process.stdout.write("ready\n");
for await (const line of lines) if (line === "go") break;
lines.close();
for (let turn = 0; turn < Number(turnsText); turn++) {
  const lease = await store.leases.acquire(KEY, worker, 30_000, { waitMs: 120_000, pollMs: 5 });
  if (lease === undefined) throw new Error(`${worker}: no lease for turn ${turn}`);
  const { rows } = await sql<{ id: number }>`
    INSERT INTO turn_log (worker, turn, token, started_at)
    VALUES (${worker}, ${turn}, ${lease.token}, clock_timestamp()) RETURNING id`.execute(store.db);
  await store.loadTranscript("main", SESSION, { lease });
  const transcript = store.openTranscript("main", SESSION, {
    header: { type: "session", version: 3, id: SESSION, timestamp: new Date(0).toISOString(), cwd: "/work" },
  });
  const runs = store.fencedRuns(lease);
  const runId = `${worker}-${turn}`;
  await runs.start({ runId, agentId: "main", sessionKey: KEY, sessionId: SESSION, entryPoint: "lane-test" });
  for (let step = 0; step < 3; step++) {
    transcript.append({
      type: "custom",
      id: `${runId}-${step}`,
      parentId: transcript.getLeafId(),
      timestamp: new Date().toISOString(),
      customType: "turn",
      data: { worker, turn, step, token: lease.token },
    });
    await sleep(1 + Math.floor(Math.random() * 3));
  }
  await transcript.flush();
  await runs.finish(runId, { status: "succeeded" });
  await sql`UPDATE turn_log SET ended_at = clock_timestamp() WHERE id = ${rows[0]?.id ?? -1}`.execute(
    store.db,
  );
  await store.leases.release(lease);
}
await store.close();
process.stdout.write("done\n");
