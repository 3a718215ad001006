// A child process for ../crash-trials.test.ts: appends transcript entries (in batches of 1–4 at the leaf) and
// run records in a loop until it is killed (kill -9). Before appending an entry it logs "intent <id>", after
// the flush that made a batch durable "flushed <id> ..." (appendFileSync: in the file before it moves on).
// Prints "ready" after its first durable batch.
//   node --conditions=@agent-kernel/source src/postgres/children/crash-writer.ts <connectionString> <schema> <logFile>
import { appendFileSync } from "node:fs";
import { openPostgresSessionStore } from "../store.ts";

const [connectionString = "", schema = "", logFile = ""] = process.argv.slice(2);
const KEY = "agent:main:crash";
const SESSION = "crash-session";
const store = await openPostgresSessionStore({ connectionString, schema, maxConnections: 2 });
await store.loadTranscript("main", SESSION);
const transcript = store.openTranscript("main", SESSION, {
  header: { type: "session", version: 3, id: SESSION, timestamp: new Date(0).toISOString(), cwd: "/work" },
});
for (let round = 0; ; round++) {
  const runId = `${process.pid}-run-${round}`;
  await store.runs.start({
    runId,
    agentId: "main",
    sessionKey: KEY,
    sessionId: SESSION,
    entryPoint: "crash-test",
  });
  const ids: string[] = [];
  const size = 1 + Math.floor(Math.random() * 4);
  for (let index = 0; index < size; index++) {
    const id = `${process.pid}-${round}-${index}`;
    appendFileSync(logFile, `intent ${id}\n`);
    transcript.append({
      type: "message",
      id,
      parentId: transcript.getLeafId(),
      timestamp: new Date().toISOString(),
      message: {
        role: "user",
        content: [{ type: "text", text: `round ${round} entry ${index} ${"x".repeat(200)}` }],
      },
    });
    ids.push(id);
  }
  await transcript.flush();
  appendFileSync(logFile, `flushed ${ids.join(" ")}\n`);
  await store.runs.appendEvents(runId, [{ seq: 1, ts: Date.now(), stream: "lifecycle", data: { ids } }]);
  await store.runs.finish(runId, { status: "succeeded" });
  if (round === 0) process.stdout.write("ready\n");
}
