// Steering as OpenClaw's `steer` mode: the queue is checked after each tool call; a message steered while
// the first of two tool calls runs skips the second ("Skipped due to queued user message.") and is the next
// thing the model reads. pi for real, the turn through `executeTurn`, pi's faux provider.
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  type Context,
  type FauxProviderHandle,
  fauxAssistantMessage,
  fauxProvider,
  fauxToolCall,
} from "@earendil-works/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { executeTurn, SteerHandle } from "../../src/executor/index.ts";
import { STEER_SKIP_MESSAGE, steerableTools } from "../../src/executor/steering.ts";
import { buildDefaultTools } from "../../src/tools/index.ts";
import { createHarness, fauxConfig, type Harness } from "./harness.ts";

let faux: FauxProviderHandle;
let harness: Harness;

beforeEach(async () => {
  faux = fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1", reasoning: true, input: ["text"], contextWindow: 200_000, maxTokens: 8192 }],
    tokenSize: { min: 4, max: 4 },
  });
  harness = await createHarness({ config: fauxConfig(), nativeProviders: [faux.provider] });
});
afterEach(async () => {
  await harness.close();
});

/** The messages after the turn's prompt, as the model got them: role, and tool name / error / text. */
function tail(ctx: Context): string[] {
  const start = ctx.messages.findIndex((message) => message.role === "assistant");
  return ctx.messages.slice(start).map((message) => {
    if (message.role === "toolResult") {
      const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
      return `toolResult ${message.toolName}${message.isError ? " error" : ""}: ${text.trim()}`;
    }
    if (message.role === "user") {
      const content = message.content;
      const text =
        typeof content === "string"
          ? content
          : content.map((block) => (block.type === "text" ? block.text : "")).join("");
      return `user: ${text}`;
    }
    return message.role;
  });
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 600 && !condition(); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  if (!condition()) throw new Error("condition never held");
}

describe("steering in steer mode", () => {
  it("a message steered during the first of two tool calls skips the second; the next model call sees it", async () => {
    const steering = new SteerHandle();
    const seen: string[][] = [];
    faux.setResponses([
      fauxAssistantMessage(
        [
          fauxToolCall("exec", { command: "touch first-started; sleep 2; echo first done" }, { id: "c1" }),
          fauxToolCall("write", { path: "second.txt", content: "should not be written" }, { id: "c2" }),
        ],
        { stopReason: "toolUse" },
      ),
      (ctx) => {
        seen.push(tail(ctx));
        return fauxAssistantMessage("Switching to the new request.");
      },
    ]);
    const context = await harness.context("agent:main:steer");
    const turn = executeTurn(context, {
      prompt: "do two things",
      timeoutMs: 60_000,
      entryPoint: "agent",
      steering,
    });
    await waitFor(() => existsSync(join(harness.workspaceDir, "first-started")));
    const delivered = steering.steer("STEERED: stop and do something else");
    const result = await turn;
    expect(result.status).toBe("ok");
    expect(await delivered).toBe(true);
    expect(existsSync(join(harness.workspaceDir, "second.txt"))).toBe(false);
    expect(seen).toEqual([
      [
        "assistant",
        "toolResult exec: first done",
        `toolResult write error: ${STEER_SKIP_MESSAGE}`,
        "user: STEERED: stop and do something else",
      ],
    ]);
    expect(result.assistantText).toBe("Switching to the new request.");
  });

  it("without a steered message every call of the message runs, one after another", async () => {
    const steering = new SteerHandle();
    faux.setResponses([
      fauxAssistantMessage(
        [
          fauxToolCall("exec", { command: "sleep 0.3; echo one > order.txt" }, { id: "c1" }),
          fauxToolCall("exec", { command: "echo two >> order.txt; cat order.txt" }, { id: "c2" }),
        ],
        { stopReason: "toolUse" },
      ),
      (ctx) => fauxAssistantMessage(tail(ctx).at(-1) ?? ""),
    ]);
    const context = await harness.context("agent:main:nosteer");
    const result = await executeTurn(context, {
      prompt: "go",
      timeoutMs: 60_000,
      entryPoint: "agent",
      steering,
    });
    expect(result.status).toBe("ok");
    // The second call ran after the first had finished (sequential), and nothing was skipped.
    expect(result.assistantText).toBe("toolResult exec: one\ntwo");
  });

  it("a message steered before the calls start still lets the first call run, then skips the rest", async () => {
    const steering = new SteerHandle();
    let steered: Promise<boolean> | undefined;
    const seen: string[][] = [];
    faux.setResponses([
      () => {
        // The model is answering: the message waits in the queue until after the first tool call.
        steered = steering.steer("STEERED early");
        return fauxAssistantMessage(
          [
            fauxToolCall("exec", { command: "echo ran" }, { id: "c1" }),
            fauxToolCall("exec", { command: "echo skipped-1" }, { id: "c2" }),
            fauxToolCall("exec", { command: "echo skipped-2" }, { id: "c3" }),
          ],
          { stopReason: "toolUse" },
        );
      },
      (ctx) => {
        seen.push(tail(ctx));
        return fauxAssistantMessage("ok");
      },
    ]);
    const context = await harness.context("agent:main:early");
    const result = await executeTurn(context, {
      prompt: "go",
      timeoutMs: 60_000,
      entryPoint: "agent",
      steering,
    });
    expect(result.status).toBe("ok");
    expect(await steered).toBe(true);
    expect(seen).toEqual([
      [
        "assistant",
        "toolResult exec: ran",
        `toolResult exec error: ${STEER_SKIP_MESSAGE}`,
        `toolResult exec error: ${STEER_SKIP_MESSAGE}`,
        "user: STEERED early",
      ],
    ]);
  });

  it("the wrappers are the same objects every turn (a warm session stays warm); a later turn skips by its own handle", async () => {
    const tools = buildDefaultTools({
      workspaceDir: harness.workspaceDir,
      agentId: "main",
      store: harness.store,
    });
    const first = steerableTools(tools);
    const second = steerableTools(tools);
    expect(second).toHaveLength(tools.length);
    second.forEach((tool, index) => {
      expect(tool).toBe(first[index]);
      expect(tool.executionMode).toBe("sequential");
    });
    // Two turns of one session: the second (on the first one's warm session when kept) still skips.
    faux.setResponses([fauxAssistantMessage("hello")]);
    const context = await harness.context("agent:main:twice");
    expect(
      (
        await executeTurn(context, {
          prompt: "hi",
          timeoutMs: 60_000,
          entryPoint: "agent",
          steering: new SteerHandle(),
        })
      ).status,
    ).toBe("ok");
    const steering = new SteerHandle();
    const seen: string[][] = [];
    faux.setResponses([
      fauxAssistantMessage(
        [
          fauxToolCall("exec", { command: "touch again-started; sleep 2; echo first" }, { id: "d1" }),
          fauxToolCall("exec", { command: "touch should-not-run" }, { id: "d2" }),
        ],
        { stopReason: "toolUse" },
      ),
      (ctx) => {
        seen.push(tail(ctx).slice(-3));
        return fauxAssistantMessage("ok");
      },
    ]);
    const turn = executeTurn(await harness.context("agent:main:twice"), {
      prompt: "again",
      timeoutMs: 60_000,
      entryPoint: "agent",
      steering,
    });
    await waitFor(() => existsSync(join(harness.workspaceDir, "again-started")));
    const delivered = steering.steer("STEERED second turn");
    expect((await turn).status).toBe("ok");
    expect(await delivered).toBe(true);
    expect(existsSync(join(harness.workspaceDir, "should-not-run"))).toBe(false);
    expect(seen).toEqual([
      ["toolResult exec: first", `toolResult exec error: ${STEER_SKIP_MESSAGE}`, "user: STEERED second turn"],
    ]);
  });

  it("a message steered into one session skips nothing in another session running its tool calls at the same time", async () => {
    // Both sessions share the same wrapped tool objects; each call finds its own turn's handle.
    const respond = (ctx: Context) => {
      const first = ctx.messages.find((message) => message.role === "user");
      const text = typeof first?.content === "string" ? first.content : JSON.stringify(first?.content ?? "");
      const who = text.includes("session A") ? "a" : "b";
      if (ctx.messages.some((message) => message.role === "toolResult"))
        return fauxAssistantMessage(`${who} done`);
      return fauxAssistantMessage(
        [
          fauxToolCall(
            "exec",
            { command: `touch ${who}-started; sleep ${who === "a" ? 3 : 1}; echo ${who}` },
            { id: `${who}1` },
          ),
          fauxToolCall("exec", { command: `touch ${who}-second` }, { id: `${who}2` }),
        ],
        { stopReason: "toolUse" },
      );
    };
    faux.setResponses([respond, respond, respond, respond]);
    const steeringA = new SteerHandle();
    const turnA = executeTurn(await harness.context("agent:main:session-a"), {
      prompt: "session A",
      timeoutMs: 60_000,
      entryPoint: "agent",
      steering: steeringA,
    });
    const turnB = executeTurn(await harness.context("agent:main:session-b"), {
      prompt: "session B",
      timeoutMs: 60_000,
      entryPoint: "agent",
      steering: new SteerHandle(),
    });
    await waitFor(
      () =>
        existsSync(join(harness.workspaceDir, "a-started")) &&
        existsSync(join(harness.workspaceDir, "b-started")),
    );
    const delivered = steeringA.steer("STEERED into A");
    const [a, b] = await Promise.all([turnA, turnB]);
    expect([a.status, b.status]).toEqual(["ok", "ok"]);
    expect(await delivered).toBe(true);
    expect(existsSync(join(harness.workspaceDir, "a-second"))).toBe(false);
    expect(existsSync(join(harness.workspaceDir, "b-second"))).toBe(true);
  });
});
