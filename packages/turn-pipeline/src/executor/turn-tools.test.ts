import { fauxProvider, Type } from "@earendil-works/pi-ai";
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHarness, fauxConfig, type Harness } from "../../test/executor/harness.ts";
import { TurnEventLog } from "./event-bridge.ts";
import { kernelSystemPromptFor } from "./system-prompt.ts";
import { prepareTurnSandbox, turnTools } from "./turn-tools.ts";
import type { TurnContext } from "./types.ts";

let harness: Harness;

beforeEach(async () => {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1", contextWindow: 200_000 }] });
  harness = await createHarness({ config: fauxConfig(), nativeProviders: [faux.provider] });
});
afterEach(async () => {
  await harness.close();
});

const sink = { send: async () => ({ messageId: "m1" }) };

async function toolsOf(
  context: TurnContext,
  texts: string[],
  session: object,
): Promise<readonly ToolDefinition[]> {
  const sandbox = await prepareTurnSandbox(context, new TurnEventLog("run", Date.now));
  return turnTools(context, sandbox, texts, undefined, session);
}

function tool(tools: readonly ToolDefinition[], name: string): ToolDefinition {
  const found = tools.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no ${name} tool`);
  return found;
}

describe("a session's turn tools", () => {
  it("are the very same objects from turn to turn, and the message tool reports to the turn that runs", async () => {
    const context = await harness.context("agent:main:tools", { overrides: { deliverySink: sink } });
    const session = {};
    const firstTurn: string[] = [];
    const secondTurn: string[] = [];
    const first = await toolsOf(context, firstTurn, session);
    // The next turn of the same session: another context object, equal in everything the tools are made of
    // (the policy is the same object: its wrappers ask it at every call).
    const again: TurnContext = { ...context, exec: { ...context.exec } };
    const second = await toolsOf(again, secondTurn, session);
    expect(second.map((item) => item.name)).toContain("message");
    expect(second).toHaveLength(first.length);
    second.forEach((item, index) => {
      expect(item).toBe(first[index]);
    });
    await tool(second, "message").execute(
      "call-1",
      { text: "sent in the second turn" },
      undefined,
      undefined,
      {} as never,
    );
    expect(secondTurn).toEqual(["sent in the second turn"]);
    expect(firstTurn).toEqual([]);
  });

  it("are built again when something they are made from changed, and per session", async () => {
    const context = await harness.context("agent:main:tools-changed");
    const session = {};
    const before = await toolsOf(context, [], session);
    const extra = {
      name: "lookup",
      label: "lookup",
      description: "Looks something up",
      parameters: Type.Object({}),
      execute: async () => ({ content: [{ type: "text" as const, text: "found" }], details: {} }),
    } as unknown as ToolDefinition;
    const withExtra = await toolsOf({ ...context, extraTools: [extra] }, [], session);
    expect(withExtra.map((item) => item.name)).toEqual([...before.map((item) => item.name), "lookup"]);
    // Another session gets its own list (its exec and process are its own background commands).
    const other = await toolsOf({ ...context, sessionId: "another-session" }, [], {});
    expect(tool(other, "exec")).not.toBe(tool(before, "exec"));
    expect(tool(other, "read")).toBe(tool(before, "read"));
  });
});

describe("kernelSystemPromptFor", () => {
  const input = {
    mode: "full" as const,
    workspaceDir: "/work/space",
    toolNames: ["read", "exec"],
    agentId: "main",
    provider: "faux",
    model: "faux-1",
    thinkingLevel: "off",
    modelAliases: [{ alias: "fast", ref: "faux/faux-1" }],
  };

  it("hands back the very same prompt for an equal input, and builds it again when the input changes", () => {
    const holder = {};
    const first = kernelSystemPromptFor(holder, input);
    expect(kernelSystemPromptFor(holder, { ...input, toolNames: ["read", "exec"] })).toBe(first);
    const withoutExec = kernelSystemPromptFor(holder, { ...input, toolNames: ["read"] });
    expect(withoutExec).not.toEqual(first);
    expect(withoutExec).not.toContain("- exec:");
    expect(kernelSystemPromptFor(holder, { ...input, thinkingLevel: "high" })).toContain("thinking=high");
  });
});
