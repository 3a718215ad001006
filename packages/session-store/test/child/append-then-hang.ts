// A child process for src/sqlite/append-journal.test.ts: appends `count` entries in one synchronous burst,
// prints "appended", then either blocks its thread until the parent kills it (kill -9: the burst's fold, a
// group commit, never runs, so the entries exist only in this process's append journal) or, with `exit`, calls
// process.exit without closing the store.
//   node --conditions=@agent-kernel/source test/child/append-then-hang.ts <stateDir> <count> [hang|exit]
import { writeSync } from "node:fs";
import { openSessionStore } from "../../src/store.ts";

const [stateDir = "", countText = "0", ending = "hang"] = process.argv.slice(2);
const store = await openSessionStore({ stateDir });
const transcript = store.openTranscript("main", "s1", {
  header: { type: "session", version: 3, id: "s1", timestamp: new Date(0).toISOString(), cwd: "/work" },
});
let parentId: string | null = null;
for (let index = 0; index < Number(countText); index++) {
  const id = `entry-${index}`;
  transcript.append({ type: "custom", id, parentId, timestamp: new Date(0).toISOString(), data: { index } });
  parentId = id;
}
writeSync(1, "appended\n");
if (ending === "exit") process.exit(0);
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
