// A child process for src/two-process.test.ts: writes a session, a transcript entry and an auth update per
// step, printing the step's number once all three are committed and then sleeping 2 ms (so 600 steps span
// more than one tick of the background WAL checkpoint), until the parent kills it (kill -9).
//   node --conditions=@agent-kernel/source test/child/write-until-killed.ts <stateDir>
import { setTimeout as sleep } from "node:timers/promises";
import { openSessionStore } from "../../src/store.ts";

const [stateDir = ""] = process.argv.slice(2);
const store = await openSessionStore({ stateDir });
const transcript = store.openTranscript("main", "s1", {
  header: { type: "session", version: 3, id: "s1", timestamp: new Date(0).toISOString(), cwd: "/work" },
});
let parentId: string | null = null;
for (let step = 0; ; step++) {
  await store.sessions.create({ agentId: "main", sessionKey: `key-${step}`, sessionId: `session-${step}` });
  const id = `entry-${step}`;
  transcript.append({ type: "custom", id, parentId, timestamp: new Date(0).toISOString(), data: { step } });
  parentId = id;
  await store.auth.update("main", "faux:me", (current) => ({ ...current, errorCount: step + 1 }));
  process.stdout.write(`${step}\n`);
  await sleep(2);
}
