// The kernel against tooling/fake-llm over real HTTP: pi's real OpenAI-compatible client, SSE parser and
// error path, a custom provider from the config, a tool call in the workspace and a rate-limit fault.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@agent-kernel/config";
import { type FakeLlm, fault, reply, startFakeLlm, toolCall } from "@agent-kernel/fake-llm";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKernel, type Kernel } from "./index.ts";

let llm: FakeLlm;
let store: SqliteSessionStore;
let kernel: Kernel;
let root: string;
let workspaceDir: string;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "kernel-http-"));
  workspaceDir = join(root, "workspace");
  mkdirSync(workspaceDir);
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
      agents: { defaults: { model: "local/scripted-1", workspace: workspaceDir } },
      tools: { profile: "coding" },
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

describe("kernel over HTTP (fake-llm, OpenAI wire)", () => {
  it("runs a tool-using turn and records usage reported by the server", async () => {
    llm.enqueue(
      toolCall("write", { path: "notes.md", content: "# Notes\n" }),
      reply("Wrote notes.md.", { usage: { input: 120, output: 8 } }),
    );
    const prepared = await kernel.prepareSession({ sessionKey: "http" });
    const partials: string[] = [];
    const outcome = await kernel.executeTurn(prepared, {
      prompt: "write the notes file",
      callbacks: { onPartialReply: (payload) => partials.push(payload.text) },
    });
    expect(outcome.status).toBe("ok");
    expect(outcome.result.assistantText).toBe("Wrote notes.md.");
    expect(partials.at(-1)).toBe("Wrote notes.md.");
    expect(readFileSync(join(workspaceDir, "notes.md"), "utf8")).toBe("# Notes\n");
    expect(llm.requests.map((request) => request.served)).toEqual(["response", "response"]);
    expect(outcome.sessionMeta).toMatchObject({
      modelProvider: "local",
      model: "scripted-1",
      contextTokens: 32_000,
      outputTokens: outcome.result.usage.output,
      systemSent: true,
    });
  });

  it("surfaces a persistent rate limit as an error outcome and keeps the session usable", async () => {
    llm.enqueue(fault("rate_limit", { times: 3 }));
    const prepared = await kernel.prepareSession({ sessionKey: "limited" });
    const failed = await kernel.executeTurn(prepared, { prompt: "hi" });
    expect(failed.status).toBe("error");
    expect(failed.result.reason).toBe("rate_limit");
    expect((await store.runs.get(failed.runId))?.status).toBe("failed");
    expect(failed.sessionMeta.abortedLastRun).toBe(false);

    llm.setScenario({ steps: [reply("back")] });
    const next = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "limited" }), {
      prompt: "again",
    });
    expect(next.status).toBe("ok");
    expect(next.result.assistantText).toBe("back");
  });
});
