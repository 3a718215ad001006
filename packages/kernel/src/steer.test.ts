// `kernel.steer`: a message steered into a running turn reaches the model within that turn, over real HTTP to
// tooling/fake-llm (pi's real client and agent loop); and steering where no turn runs answers false.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@agent-kernel/config";
import { type FakeLlm, type RecordedRequest, reply, startFakeLlm, toolCall } from "@agent-kernel/fake-llm";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKernel, type Kernel } from "./index.ts";

let llm: FakeLlm;
let store: SqliteSessionStore;
let kernel: Kernel;
let root: string;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "kernel-steer-"));
  const workspaceDir = join(root, "workspace");
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
  kernel = createKernel({ config, store, paths: { env: {}, homeDir: root, cwd: root } });
});

afterEach(async () => {
  await llm.close();
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

/** The user texts of a request the model got, in order. */
function userTexts(request: RecordedRequest | undefined): string[] {
  const body = request?.body as { messages?: { role: string; content: unknown }[] } | undefined;
  return (body?.messages ?? [])
    .filter((message) => message.role === "user")
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : (message.content as { type: string; text?: string }[])
            .map((part) => (part.type === "text" ? (part.text ?? "") : ""))
            .join(""),
    );
}

describe("kernel.steer", () => {
  it("puts a message steered by session key into the next model request of the same run", async () => {
    const sessionKey = "agent:main:steer";
    let steered: Promise<boolean> | undefined;
    llm.enqueue(
      // The first model call is under way: the turn is running and prompting.
      () => {
        steered = kernel.steer(sessionKey, "STEERED: also mention the weather");
        return toolCall("ls", { path: "." });
      },
      reply("Listed, and the weather is fine."),
    );
    const prepared = await kernel.prepareSession({ sessionKey });
    const outcome = await kernel.executeTurn(prepared, { prompt: "list the files" });
    expect(outcome.status).toBe("ok");
    expect(await steered).toBe(true);
    expect(llm.requests).toHaveLength(2);
    expect(userTexts(llm.requests[0])).toEqual(["list the files"]);
    expect(userTexts(llm.requests[1])).toEqual(["list the files", "STEERED: also mention the weather"]);
    expect(outcome.result.assistantText).toBe("Listed, and the weather is fine.");
    // One run holds both.
    expect(await store.runs.listForSession({ agentId: "main", sessionKey })).toHaveLength(1);
  });

  it("steered after a final answer (no tool call), the run continues with one more model call", async () => {
    let steered: Promise<boolean> | undefined;
    let runId = "";
    llm.enqueue(() => {
      runId = kernel.activeRuns()[0]?.runId ?? "";
      steered = kernel.steer(runId, "one more thing");
      return reply("first answer");
    }, reply("second answer"));
    const prepared = await kernel.prepareSession({ sessionKey: "plain" });
    const outcome = await kernel.executeTurn(prepared, { prompt: "hi" });
    expect(await steered).toBe(true);
    expect(outcome.runId).toBe(runId);
    expect(userTexts(llm.requests[1])).toEqual(["hi", "one more thing"]);
    expect(outcome.result.assistantText).toBe("second answer");
  });

  it("answers false when no turn runs: unknown session or run, or a run that already ended", async () => {
    expect(await kernel.steer("agent:main:idle", "anyone?")).toBe(false);
    expect(await kernel.steer("no-such-run", "anyone?")).toBe(false);
    llm.enqueue(reply("done"));
    const outcome = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "ended" }), {
      prompt: "hi",
    });
    expect(await kernel.steer(outcome.runId, "too late")).toBe(false);
    expect(await kernel.steer("agent:main:ended", "too late")).toBe(false);
    expect(llm.requests).toHaveLength(1);
  });
});
