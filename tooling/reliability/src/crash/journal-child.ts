// The journal crash trials' child process (journal-crash.test.ts): writes a turn's durable writes through the
// real SQLite store's journals — run start, the transcript flush (`appendMany`, two entries), run finish with
// its events — turn after turn, and kills itself with SIGKILL right after the write the parent chose: between
// that write's journal line and its fold (the group commit runs in a later event-loop turn, which never
// comes). Between turns it sometimes yields to the event loop, so that some earlier writes are folded and
// some are not when it dies. Reports on stdout (each write synchronous): `ok start <runId>`, `ok flush
// <entryIds>`, `ok finish <runId>` once each write returned (durable), `ready` when the store is open.
//   node --conditions=@agent-kernel/source src/crash/journal-child.ts <stateDir> <trial> <killAfterWrite> <seed>
import { writeSync } from "node:fs";
import { openSessionStore } from "@agent-kernel/session-store";
import { seededRandom } from "../support/random.ts";

const [stateDir = "", trial = "0", killAfterText = "1", seedText = "1"] = process.argv.slice(2);
const killAfter = Number(killAfterText);
const random = seededRandom(Number(seedText));

function report(line: string): void {
  writeSync(1, `${line}\n`);
}

const store = await openSessionStore({ stateDir });
const sessionId = "journal-session";
const ref = { agentId: "main", sessionKey: "agent:main:journal", sessionId };
const transcript = store.openTranscript("main", sessionId, {
  header: { type: "session", version: 3, id: sessionId, timestamp: new Date(0).toISOString(), cwd: "/w" },
});
report("ready");
let written = 0;
/** After each durable write: report it, and die here when it is the chosen one (before any fold). */
function wrote(line: string): void {
  report(line);
  written += 1;
  if (written === killAfter) process.kill(process.pid, "SIGKILL");
}

let parentId = transcript.getLeafId();
for (let turn = 0; ; turn++) {
  const runId = `t${trial}-run${turn}`;
  await store.runs.start({ ...ref, runId, entryPoint: "agent", startedAt: turn });
  wrote(`ok start ${runId}`);
  const user = `t${trial}-u${turn}`;
  const answer = `t${trial}-a${turn}`;
  transcript.appendMany([
    { type: "custom", id: user, parentId, timestamp: "t", data: { turn, role: "user" } },
    { type: "custom", id: answer, parentId: user, timestamp: "t", data: { turn, role: "assistant" } },
  ]);
  parentId = answer;
  wrote(`ok flush ${user},${answer}`);
  await store.runs.finish(runId, {
    status: "succeeded",
    endedAt: turn + 1,
    model: "m",
    events: [
      { seq: 1, ts: turn, stream: "lifecycle", data: { phase: "start" } },
      { seq: 2, ts: turn + 1, stream: "lifecycle", data: { phase: "end" } },
    ],
  });
  wrote(`ok finish ${runId}`);
  // Sometimes an event-loop turn: the group commit folds what is journaled so far.
  if (random() < 0.5) await new Promise((resolve) => setImmediate(resolve));
}
