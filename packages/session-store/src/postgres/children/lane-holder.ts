// A child process for ../two-process.test.ts: takes the session's lease (`ttlMs`), starts a run and appends
// and flushes one entry under it, prints "held <token>", then waits for commands on stdin: "write" appends and
// flushes one more entry and finishes the run, printing "wrote" or "refused <error name>". The test kills it
// (kill -9) or pauses it past the lease's expiry (SIGSTOP) before sending "write".
//   node --conditions=@agent-kernel/source src/postgres/children/lane-holder.ts <connectionString> <schema> <name> <ttlMs>
import { createInterface } from "node:readline";
import { openPostgresSessionStore } from "../store.ts";

const [connectionString = "", schema = "", name = "", ttlText = "1000"] = process.argv.slice(2);
const KEY = "agent:main:main";
const SESSION = "lane-session";
const store = await openPostgresSessionStore({ connectionString, schema, maxConnections: 2 });
const lease = await store.leases.acquire(KEY, name, Number(ttlText), { waitMs: 60_000, pollMs: 10 });
if (lease === undefined) throw new Error("no lease");
await store.loadTranscript("main", SESSION, { lease });
const transcript = store.openTranscript("main", SESSION, {
  header: { type: "session", version: 3, id: SESSION, timestamp: new Date(0).toISOString(), cwd: "/work" },
});
const runs = store.fencedRuns(lease);
await runs.start({
  runId: `${name}-run`,
  agentId: "main",
  sessionKey: KEY,
  sessionId: SESSION,
  entryPoint: "lane-test",
});
const entry = (id: string) => ({
  type: "custom",
  id,
  parentId: transcript.getLeafId(),
  timestamp: new Date().toISOString(),
  data: { name, token: lease.token },
});
transcript.append(entry(`${name}-first`));
await transcript.flush();
process.stdout.write(`held ${lease.token}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== "write") continue;
  try {
    transcript.append(entry(`${name}-late`));
    await transcript.flush();
    await runs.finish(`${name}-run`, { status: "succeeded" });
    process.stdout.write("wrote\n");
  } catch (error) {
    process.stdout.write(`refused ${error instanceof Error ? error.name : String(error)}\n`);
  }
  try {
    await runs.finish(`${name}-run`, { status: "succeeded" });
    process.stdout.write("run finished\n");
  } catch (error) {
    process.stdout.write(`run refused ${error instanceof Error ? error.name : String(error)}\n`);
  }
}
