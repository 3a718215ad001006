// A child process for src/sqlite/run-journal.test.ts: starts a run, appends its events and finishes it in one
// synchronous burst (each write one line of this store's run journal), and a transcript batch (`appendMany`,
// one write of the append journal), prints "journaled", then blocks its thread (the group commit never runs:
// the writes exist only in the journals) until the parent kills it; with `crash` it kills itself instead
// (kill -9, at once).
//   node --conditions=@agent-kernel/source test/child/runs-then-hang.ts <stateDir> <runId> [hang|crash]
import { writeSync } from "node:fs";
import { openSessionStore } from "../../src/store.ts";

const [stateDir = "", runId = "r1", ending = "hang"] = process.argv.slice(2);
const store = await openSessionStore({ stateDir });
const ref = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" };
const transcript = store.openTranscript("main", "s1", {
  header: { type: "session", version: 3, id: "s1", timestamp: new Date(0).toISOString(), cwd: "/work" },
});
// Warm: the first journaled append of a session reads its shape; the burst below is the turn's own.
transcript.append({ type: "custom", id: "first", parentId: null, timestamp: "t", data: {} });
await store.flush();
const started = store.runs.start({ ...ref, runId, entryPoint: "agent", startedAt: 1000 });
transcript.appendMany([
  { type: "custom", id: `${runId}-user`, parentId: "first", timestamp: "t", data: { n: 1 } },
  { type: "custom", id: `${runId}-answer`, parentId: `${runId}-user`, timestamp: "t", data: { n: 2 } },
]);
const finished = store.runs.finish(runId, {
  status: "succeeded",
  endedAt: 2000,
  model: "m1",
  events: [
    { seq: 1, ts: 1001, stream: "lifecycle", data: { phase: "start" } },
    { seq: 2, ts: 1999, stream: "lifecycle", data: { phase: "end" } },
  ],
});
// The promises settled already (the journaled writes are synchronous); awaiting them runs no fold.
await Promise.all([started, finished]);
writeSync(1, "journaled\n");
if (ending === "crash") process.kill(process.pid, "SIGKILL");
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
