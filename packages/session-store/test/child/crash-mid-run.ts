// A child process for src/two-process.test.ts: starts a run and exits without finishing it or closing the
// store, as a crash would.   node --conditions=@agent-kernel/source test/child/crash-mid-run.ts <stateDir> <runId>
import { openSessionStore } from "../../src/store.ts";

const [stateDir = "", runId = ""] = process.argv.slice(2);
const store = await openSessionStore({ stateDir });
await store.runs.start({
  runId,
  agentId: "main",
  sessionKey: "agent:main:main",
  sessionId: "s1",
  entryPoint: "cron",
});
process.exit(0);
