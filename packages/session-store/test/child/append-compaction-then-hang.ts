// A child process for src/transcript-context-start.test.ts: appends a thinking-level change and `count`
// messages (stored: flushed), then in one synchronous burst of journaled appends a compaction keeping the
// last `kept` of them and two more messages; prints "appended", then blocks its thread until the parent kills
// it (kill -9: the burst's fold never runs, so the compaction exists only in this process's append journal).
//   node --conditions=@agent-kernel/source test/child/append-compaction-then-hang.ts <stateDir> <count> <kept>
import { writeSync } from "node:fs";
import { openSessionStore } from "../../src/store.ts";

const [stateDir = "", countText = "0", keptText = "0"] = process.argv.slice(2);
const store = await openSessionStore({ stateDir });
const transcript = store.openTranscript("main", "s1", {
  header: { type: "session", version: 3, id: "s1", timestamp: new Date(0).toISOString(), cwd: "/work" },
});
const timestamp = new Date(0).toISOString();
transcript.append({
  type: "thinking_level_change",
  id: "e0",
  parentId: null,
  timestamp,
  thinkingLevel: "high",
});
const count = Number(countText);
for (let index = 1; index <= count; index++)
  transcript.append({ type: "message", id: `e${index}`, parentId: `e${index - 1}`, timestamp });
await store.flush();
const firstKeptEntryId = `e${count - Number(keptText) + 1}`;
transcript.append({
  type: "compaction",
  id: "c1",
  parentId: `e${count}`,
  timestamp,
  summary: "s",
  firstKeptEntryId,
  tokensBefore: 1,
});
transcript.append({ type: "message", id: "after-1", parentId: "c1", timestamp });
transcript.append({ type: "message", id: "after-2", parentId: "after-1", timestamp });
writeSync(1, "appended\n");
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
