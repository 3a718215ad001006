// Turn limits through the kernel over tooling/fake-llm (real HTTP, pi's real client): the config keys reach
// the executor (an agent's own values over `agents.defaults` and `tools`), a hit ends the outcome with its
// reason and one line in the final payloads the delivery sink gets, the outcome is valid JSON for scripts, and
// the session's next turn works. The limits' behaviour itself is tested in turn-pipeline.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@agent-kernel/config";
import { type FakeLlm, reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKernel, type Kernel, TURN_LIMIT_REASONS, turnOutcomeJsonSchema } from "./index.ts";

let llm: FakeLlm;
let store: SqliteSessionStore;
let kernel: Kernel;
let root: string;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "kernel-limits-"));
  const workspaceDir = join(root, "workspace");
  mkdirSync(workspaceDir);
  writeFileSync(join(workspaceDir, "data.txt"), "42\n");
  llm = await startFakeLlm();
  const config = parseConfig(
    {
      store: { stateDir: join(root, "state") },
      models: {
        providers: {
          local: {
            baseUrl: llm.baseUrlFor("openai"),
            api: "openai-completions",
            models: [{ id: "scripted-1", contextWindow: 32_000, maxTokens: 4096 }],
          },
        },
      },
      agents: {
        defaults: { model: "local/scripted-1", workspace: workspaceDir, maxModelCallsPerTurn: 50 },
        list: [
          { id: "main", default: true },
          { id: "tight", tools: { maxCallsPerTurn: 2 }, replyMaxChars: 40 },
        ],
      },
      tools: { profile: "coding", maxCallsPerTurn: 3 },
    },
    { env: {} },
  );
  store = await openSessionStore({ stateDir: join(root, "state") });
  kernel = createKernel({
    config,
    store,
    paths: { env: {}, homeDir: root, cwd: root },
    executorSettings: { transientRetryDelayMs: 0 },
  });
});

afterEach(async () => {
  await llm.close();
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

let calls = 0;
const endlessRead = () => ({
  type: "response" as const,
  toolCalls: [{ id: `call_${++calls}`, name: "read", arguments: { path: "data.txt" } }],
});

describe("turn limits through the kernel", () => {
  it("tools.maxCallsPerTurn ends a tool loop; an agent's own value wins; the next turn works", async () => {
    for (const [agentId, limit] of [
      ["main", 3],
      ["tight", 2],
    ] as const) {
      llm.setScenario({ fallback: endlessRead });
      llm.clearRequests();
      const prepared = await kernel.prepareSession({ agentId, sessionKey: `agent:${agentId}:loop` });
      const finals: string[] = [];
      const outcome = await kernel.executeTurn(prepared, {
        prompt: "read forever",
        delivery: {
          onFinal: (payloads) => void finals.push(...payloads.map((payload) => payload.text ?? "")),
        },
      });
      expect(outcome.status).toBe("error");
      expect(outcome.result.reason).toBe("tool_call_limit");
      expect(TURN_LIMIT_REASONS).toContain(outcome.result.reason);
      expect(llm.requests).toHaveLength(limit + 1);
      expect(finals.at(-1)).toBe(`⚠️ Stopped: this reply reached its limit of ${limit} tool calls.`);
      expect(turnOutcomeJsonSchema.safeParse(JSON.parse(JSON.stringify(outcome))).success).toBe(true);
      expect(await store.runs.get(outcome.runId)).toMatchObject({
        status: "failed",
        errorReason: "tool_call_limit",
      });

      llm.setScenario({ steps: [reply("Fine.")] });
      const next = await kernel.executeTurn(
        await kernel.prepareSession({ agentId, sessionKey: `agent:${agentId}:loop` }),
        {
          prompt: "and now?",
        },
      );
      expect(next.status).toBe("ok");
      expect(next.result.assistantText).toBe("Fine.");
    }
  });

  it("an agent's replyMaxChars cuts its reply; what is delivered is the cut text and one line", async () => {
    llm.setScenario({ steps: [reply("0123456789 ".repeat(10), { chunkSize: 7 })] });
    const prepared = await kernel.prepareSession({ agentId: "tight", sessionKey: "agent:tight:long" });
    const outcome = await kernel.executeTurn(prepared, { prompt: "count" });
    expect(outcome.status).toBe("error");
    expect(outcome.result.reason).toBe("reply_size_limit");
    expect(outcome.result.payloads.map((payload) => payload.text)).toEqual([
      `${"0123456789 ".repeat(4).slice(0, 40).trimEnd()}\n\n⚠️ Cut: the reply reached its limit of 40 characters.`,
    ]);
  });
});
