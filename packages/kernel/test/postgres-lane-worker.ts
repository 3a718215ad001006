// A child process for src/postgres-lanes.test.ts: its own kernel over the PostgreSQL store at `url`, answering
// through fake-llm at `llmBaseUrl`. Prints "ready", waits for "go" on stdin, then starts `turns` turns on
// `sessionKey` all at once (prompts `<worker>-<n>`), printing "started <runId>" when a turn's run starts and
// "turn <runId> <prompt> <status>" when it ends, then "done" (after closing the store).
//   node --conditions=@agent-kernel/source test/postgres-lane-worker.ts '<json arguments>'
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createKernel, openKernelStore } from "../src/index.ts";
import { postgresKernelConfig } from "./postgres-kernel.ts";

interface WorkerArguments {
  readonly url: string;
  readonly llmBaseUrl: string;
  readonly model: string;
  readonly worker: string;
  readonly turns: number;
  readonly sessionKey: string;
  readonly leaseTtlMs: number;
}

const args = JSON.parse(process.argv[2] ?? "{}") as WorkerArguments;
const root = mkdtempSync(join(tmpdir(), `kernel-pg-${args.worker}-`));
const workspaceDir = join(root, "workspace");
mkdirSync(workspaceDir);
const config = postgresKernelConfig({
  url: args.url,
  llmBaseUrl: args.llmBaseUrl,
  model: args.model,
  stateDir: join(root, "state"),
  workspaceDir,
});
const store = await openKernelStore({ stateDir: join(root, "state"), config });
const kernel = createKernel({
  config,
  store,
  paths: { env: {}, homeDir: root, cwd: root },
  executorSettings: { transientRetryDelayMs: 0 },
  sessionLeases: { ttlMs: args.leaseTtlMs, pollMs: 10, owner: args.worker },
});
kernel.subscribe((event) => {
  const data = event.data as { phase?: unknown };
  if (event.stream === "lifecycle" && data.phase === "start")
    process.stdout.write(`started ${event.runId}\n`);
});
const lines = createInterface({ input: process.stdin });
process.stdout.write("ready\n");
for await (const line of lines) if (line === "go") break;
lines.close();

const prepared = await kernel.prepareSession({ sessionKey: args.sessionKey });
await Promise.all(
  Array.from({ length: args.turns }, async (_, index) => {
    const prompt = `${args.worker}-${index}`;
    const outcome = await kernel.executeTurn(prepared, { prompt, runId: prompt });
    process.stdout.write(`turn ${outcome.runId} ${prompt} ${outcome.status}\n`);
  }),
);
await store.close();
process.stdout.write("done\n");
