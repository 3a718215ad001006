// A child process for src/two-process.test.ts: opens the store, says "ready", waits for "go" on stdin, then
// appends `count` entries to one session, either at the shared leaf (`at-leaf`) or as its own chain (`own-chain`).
//   node --conditions=@agent-kernel/source test/child/append-worker.ts <stateDir> <sessionId> <worker> <count> <mode>
import { createInterface } from "node:readline";
import { openSessionStore } from "../../src/store.ts";

const [stateDir = "", sessionId = "", worker = "", countText = "0", mode = "at-leaf"] = process.argv.slice(2);
const store = await openSessionStore({ stateDir });
const transcript = store.openTranscript("main", sessionId, {
  header: { type: "session", version: 3, id: sessionId, timestamp: new Date(0).toISOString(), cwd: "/work" },
});
const lines = createInterface({ input: process.stdin });
process.stdout.write("ready\n");
for await (const line of lines) if (line === "go") break;
lines.close();
let previous: string | null = null;
for (let index = 0; index < Number(countText); index++) {
  const id = `${worker}-${index}`;
  const fields = {
    type: "custom",
    id,
    timestamp: new Date().toISOString(),
    customType: "worker",
    data: { worker, index },
  };
  if (mode === "at-leaf") transcript.appendAtLeaf(fields);
  else transcript.append({ ...fields, parentId: previous });
  previous = id;
}
await store.close();
process.stdout.write("done\n");
