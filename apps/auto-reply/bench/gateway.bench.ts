// What the gateway costs on top of the kernel per message: the same scripted one-reply turns against
// tooling/fake-llm over loopback HTTP, on one kernel and store, run directly (prepareSession + executeTurn,
// the baseline) and through the gateway (access, routing, the durable inbox write, typing, delivery to a
// TestChannel). Target: the gateway within 1.25× of the bare kernel turn.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSuite } from "@agent-kernel/bench";
import { TestChannel } from "@agent-kernel/channels-core/testing";
import { reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { createKernel, openKernelStore } from "@agent-kernel/kernel";
import { createAutoReplyGateway } from "../src/index.ts";
import { testConfig } from "../test/gateway-harness.ts";

const MESSAGES = 10;
const ITERATIONS = 6;
const WARMUP = 1;

const llm = await startFakeLlm({ scenario: { fallback: reply("A short answer.") } });
const root = mkdtempSync(join(tmpdir(), "auto-reply-bench-"));
const workspace = join(root, "workspace");
mkdirSync(workspace);
const stateDir = join(root, "state");
const config = testConfig(llm.baseUrlFor("openai"), workspace, { store: { stateDir } });
const store = await openKernelStore({ stateDir });
const kernel = createKernel({ config, store });
const channel = new TestChannel();
const gateway = createAutoReplyGateway({
  config,
  stateDir,
  channels: [channel],
  kernel,
  store,
  log: () => {},
});
await gateway.start();

let runs = 0;
async function afterLastCase(): Promise<void> {
  if (++runs < ITERATIONS + WARMUP) return;
  await gateway.stop();
  await store.close();
  await llm.close();
  rmSync(root, { recursive: true, force: true });
}

export default defineSuite({
  name: `one reply per message ×${MESSAGES} (fake-llm over HTTP)`,
  baseline: "kernel: prepareSession + executeTurn",
  iterations: ITERATIONS,
  warmup: WARMUP,
  itemsPerIteration: MESSAGES,
  cases: [
    {
      name: "kernel: prepareSession + executeTurn",
      run: async () => {
        for (let i = 0; i < MESSAGES; i++) {
          const prepared = await kernel.prepareSession({ sessionKey: "agent:main:bench-direct" });
          const outcome = await kernel.executeTurn(prepared, { prompt: `message ${i}` });
          if (outcome.status !== "ok") throw new Error(`turn ended ${outcome.status}`);
        }
      },
    },
    {
      name: "auto-reply gateway: receive → reply sent",
      target: { minSpeedup: 0.8, label: "≤ 1.25× the bare kernel turn" },
      run: async () => {
        const before = channel.sent.length;
        for (let i = 0; i < MESSAGES; i++) {
          await channel.receive({ text: `message ${i}` });
          await gateway.idle();
        }
        if (channel.sent.length - before !== MESSAGES) throw new Error("a reply was not sent");
      },
      after: afterLastCase,
    },
  ],
});
