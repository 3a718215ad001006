// What accepting a message costs over storing it: `runner.accept` (input check, the kernel's session
// resolution for the queue settings, the cap check, the durable enqueue) against the bare durable enqueue of
// the same payload into the same store (baseline), 50 messages per iteration, a fresh state dir each time.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSuite } from "@agent-kernel/bench";
import { parseConfig } from "@agent-kernel/config";
import { type KernelStore, openKernelStore } from "@agent-kernel/kernel";
import { createFollowupRunner, type FollowupRunner } from "../src/index.ts";

const MESSAGES = 50;

function configFor(root: string) {
  return parseConfig(
    {
      store: { stateDir: join(root, "state") },
      agents: { defaults: { model: "anthropic/claude-sonnet-4-5", workspace: join(root, "workspace") } },
      messages: { queue: { mode: "followup", cap: 1000 } },
    },
    { env: {} },
  );
}

export default defineSuite({
  name: `accept ${MESSAGES} messages into one session's queue`,
  baseline: "store.queue.enqueue only",
  iterations: 8,
  warmup: 1,
  itemsPerIteration: MESSAGES,
  cases: [
    {
      name: "store.queue.enqueue only",
      before: async () => {
        const root = mkdtempSync(join(tmpdir(), "followup-bench-"));
        return { root, store: await openKernelStore({ stateDir: join(root, "state") }) };
      },
      run: async ({ store }: { root: string; store: KernelStore }) => {
        for (let i = 0; i < MESSAGES; i++) {
          await store.queue.enqueue({
            itemId: `m${i}`,
            agentId: "main",
            sessionKey: "agent:main:main",
            kind: "followup.message",
            payload: { text: `message ${i}`, receivedAt: i },
          });
        }
      },
      after: async ({ root, store }: { root: string; store: KernelStore }) => {
        await store.close();
        rmSync(root, { recursive: true, force: true });
      },
    },
    {
      name: "runner.accept (resolution + cap check + enqueue)",
      before: async () => {
        const root = mkdtempSync(join(tmpdir(), "followup-bench-"));
        const runner = await createFollowupRunner({
          config: configFor(root),
          kernelOptions: { paths: { env: {}, homeDir: root, cwd: root } },
        });
        return { root, runner };
      },
      run: async ({ runner }: { root: string; runner: FollowupRunner }) => {
        for (let i = 0; i < MESSAGES; i++) await runner.accept({ id: `m${i}`, text: `message ${i}` });
      },
      after: async ({ root, runner }: { root: string; runner: FollowupRunner }) => {
        await runner.stop();
        rmSync(root, { recursive: true, force: true });
      },
    },
  ],
});
