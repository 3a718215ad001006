// A follow-up runner in a child process that the crash test kills with SIGKILL at a chosen point.
//   node --conditions=@agent-kernel/source test/crash-child.ts <config.json> <scenario>
// Scenarios:
// - `accept-while-busy`: a turn runs on the session (straight through the kernel, as another entry point
//   would; its model call never answers), then a message is accepted for the busy session: prints
//   `ACCEPTED <itemId>` once `accept` returned, and waits to be killed.
// - `kill-after-turn`: a message is accepted and run; the process kills itself when the turn has ended and
//   its payloads are delivered, before the queue item is completed.
// - `run-and-wait`: a message is accepted and its turn started; the test kills the process mid-turn.
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseConfig } from "@agent-kernel/config";
import { createFollowupRunner } from "../src/index.ts";

const [configPath, scenario] = process.argv.slice(2);
if (configPath === undefined || scenario === undefined)
  throw new Error("usage: crash-child <config> <scenario>");
const config = parseConfig(JSON.parse(readFileSync(configPath, "utf8")), { env: {} });
const root = dirname(configPath);
const runner = await createFollowupRunner({
  config,
  kernelOptions: { paths: { env: {}, homeDir: root, cwd: root } },
});

if (scenario === "accept-while-busy") {
  const prepared = await runner.kernel.prepareSession({ sessionKey: "main" });
  void runner.kernel.executeTurn(prepared, { prompt: "a turn from another entry point" });
  while (runner.kernel.activeRuns().length === 0) await new Promise((resolve) => setImmediate(resolve));
  const accepted = await runner.accept({ id: "crash-me", text: "queued while busy" });
  process.stdout.write(`ACCEPTED ${accepted.itemId} busy=${accepted.busy}\n`);
  await new Promise(() => {});
} else if (scenario === "kill-after-turn") {
  runner.on("delivered", () => {
    process.kill(process.pid, "SIGKILL");
  });
  await runner.accept({ id: "run-once", text: "run me exactly once" });
  await runner.start();
  await new Promise(() => {});
} else if (scenario === "run-and-wait") {
  await runner.accept({ id: "mid-turn", text: "killed during my turn" });
  await runner.start();
  await new Promise(() => {});
} else {
  throw new Error(`unknown scenario ${scenario}`);
}
