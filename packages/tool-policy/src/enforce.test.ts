import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@agent-kernel/config";
import { type AgentMessage, type AgentTool, runAgentLoop } from "@earendil-works/pi-agent-core";
import {
  createFauxCore,
  fauxAssistantMessage,
  fauxToolCall,
  type Message,
  Type,
} from "@earendil-works/pi-ai";
import {
  createBashTool,
  createBashToolDefinition,
  createEditToolDefinition,
  createReadTool,
  createReadToolDefinition,
  createWriteToolDefinition,
  type ExtensionContext,
} from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import {
  ABORTED_MESSAGE,
  enforceToolPolicy,
  enforceToolPolicyOnAll,
  ToolPolicyBlockedError,
} from "./enforce.ts";
import type { AgentToolLike, ToolDefinitionLike } from "./pi-tool-shapes.ts";
import { resolveToolPolicy, type ToolDecision } from "./resolve.ts";

const dir = mkdtempSync(join(tmpdir(), "tool-policy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "note.txt"), "hello from disk\n");

const noExec = resolveToolPolicy(parseConfig({ tools: { deny: ["group:runtime"] } }, { env: {} }));

describe("real pi tools fit the boundary shapes", () => {
  it("pi-coding-agent definitions and pi-agent-core tools type-check and keep their fields", () => {
    const definitions: ToolDefinitionLike[] = [
      createReadToolDefinition(dir),
      createWriteToolDefinition(dir),
      createEditToolDefinition(dir),
      createBashToolDefinition(dir),
    ];
    const agentTools: AgentToolLike[] = [createReadTool(dir), createBashTool(dir)];
    const wrapped = enforceToolPolicyOnAll(definitions, { policy: noExec });
    expect(wrapped.map((tool) => tool.name)).toEqual(["read", "write", "edit", "bash"]);
    expect(wrapped[0]?.parameters).toBe(definitions[0]?.parameters);
    expect(wrapped[0]?.promptSnippet).toBe(definitions[0]?.promptSnippet);
    const typed: AgentTool = enforceToolPolicy(createReadTool(dir), { policy: noExec });
    expect(typed.label).toBe(agentTools[0]?.label);
  });

  it("a wrapped ToolDefinition runs with its extension context argument passed through", async () => {
    const read = enforceToolPolicy(createReadToolDefinition(dir), { policy: noExec });
    const result = await read.execute(
      "call-1",
      { path: "note.txt" },
      undefined,
      undefined,
      {} as ExtensionContext,
    );
    expect(JSON.stringify(result.content)).toContain("hello from disk");
  });
});

describe("a blocked call, through a real pi agent loop", () => {
  it("returns an error tool result carrying the explanation, and the tool never runs", async () => {
    const faux = createFauxCore({ provider: "faux-policy" });
    const seen: string[] = [];
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("bash", { command: `touch ${join(dir, "ran")}` }, { id: "c1" })], {
        stopReason: "toolUse",
      }),
      (context) => {
        for (const message of context.messages)
          if (message.role === "toolResult") seen.push(JSON.stringify(message));
        return fauxAssistantMessage("understood");
      },
    ]);
    const blocked: ToolDecision[] = [];
    const tools = [createBashTool(dir), createReadTool(dir)].map((tool) =>
      enforceToolPolicy(tool, { policy: noExec, onBlocked: (decision) => blocked.push(decision) }),
    );
    const messages = await runAgentLoop(
      [{ role: "user", content: "run it", timestamp: 0 }],
      { messages: [], tools },
      {
        model: faux.getModel(),
        convertToLlm: (all: AgentMessage[]) =>
          all.filter(
            (m): m is Message => m.role === "user" || m.role === "assistant" || m.role === "toolResult",
          ),
      },
      () => {},
      undefined,
      faux.streamSimple,
    );
    const toolResult = messages.find((message) => message.role === "toolResult");
    expect(toolResult).toMatchObject({ isError: true, toolName: "bash" });
    expect(seen[0]).toContain('blocked by tools.deny — deny \\"group:runtime\\" (tools.deny[0])');
    expect(blocked.map((decision) => decision.normalized)).toEqual(["exec"]);
    expect(existsSync(join(dir, "ran"))).toBe(false);
  });

  it("asks the current policy at every call", async () => {
    let policy = noExec;
    const tool = enforceToolPolicy(counter(), { policy: () => policy });
    await expect(tool.execute("c", {})).resolves.toBeDefined();
    policy = resolveToolPolicy(parseConfig({ tools: { allow: ["read"] } }, { env: {} }));
    await expect(tool.execute("c", {})).rejects.toBeInstanceOf(ToolPolicyBlockedError);
  });
});

describe("abort", () => {
  it("aborted before the call: rejects with pi's words and does not run the tool", async () => {
    const tool = counter();
    const wrapped = enforceToolPolicy(tool, { policy: noExec });
    const controller = new AbortController();
    controller.abort();
    await expect(wrapped.execute("c", {}, controller.signal)).rejects.toThrow(ABORTED_MESSAGE);
    expect(tool.calls).toBe(0);
  });

  it("aborted while running: rejects at once, and the tool saw the signal", async () => {
    let sawAbort = false;
    const hanging: AgentTool = {
      name: "wait_forever",
      label: "wait",
      description: "never returns on its own",
      parameters: Type.Object({}),
      execute: (_id, _params, signal) =>
        new Promise((_, reject) => {
          signal?.addEventListener("abort", () => {
            sawAbort = true;
            // A tool that reports the abort late must not leak an unhandled rejection.
            setTimeout(() => reject(new Error("late")), 5);
          });
        }),
    };
    const wrapped = enforceToolPolicy(hanging, { policy: noExec });
    const controller = new AbortController();
    const call = wrapped.execute("c", {}, controller.signal);
    controller.abort();
    await expect(call).rejects.toThrow(ABORTED_MESSAGE);
    expect(sawAbort).toBe(true);
  });

  it("a call that finishes keeps its result and leaves no abort listener behind", async () => {
    const controller = new AbortController();
    const wrapped = enforceToolPolicy(counter(), { policy: noExec });
    await expect(wrapped.execute("c", {}, controller.signal)).resolves.toMatchObject({
      details: { calls: 1 },
    });
    controller.abort();
  });
});

function counter(): AgentTool & { calls: number } {
  const tool = {
    name: "count",
    label: "count",
    description: "counts calls",
    parameters: Type.Object({}),
    calls: 0,
    execute: async () => {
      tool.calls += 1;
      return {
        content: [{ type: "text" as const, text: String(tool.calls) }],
        details: { calls: tool.calls },
      };
    },
  };
  return tool;
}
