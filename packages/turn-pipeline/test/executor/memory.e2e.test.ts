// The memory tools called by a model: pi for real, turns through `executeTurn`, pi's faux provider calling
// memory_search / memory_get and reading what came back, the index in the agent's SQLite database. A fact one
// session wrote is found from another, a hand edit by the next search, paths outside the memory files are
// refused, the config gate and a policy deny remove the tools and the prompt's Memory section, and the tools
// are the same objects on every turn of a session (its pi session stays warm).
import { existsSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { resolveToolPolicy } from "@agent-kernel/tool-policy";
import {
  type Context,
  type FauxProviderHandle,
  fauxAssistantMessage,
  fauxProvider,
  fauxToolCall,
  getSystemMessageText,
  type SystemMessage,
} from "@earendil-works/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { executeTurn } from "../../src/executor/index.ts";
import { prepareTurnSandbox, turnTools } from "../../src/executor/turn-tools.ts";
import { createHarness, fauxConfig, type Harness } from "./harness.ts";

let faux: FauxProviderHandle;
const harnesses: Harness[] = [];

async function harnessWith(
  memorySearch: unknown,
  tools: unknown = { profile: "full" },
  sandbox?: unknown,
): Promise<Harness> {
  faux = fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1", reasoning: true, input: ["text"], contextWindow: 200_000, maxTokens: 8192 }],
    tokenSize: { min: 4, max: 4 },
  });
  const harness = await createHarness({
    config: fauxConfig({
      agents: {
        defaults: {
          model: "faux/faux-1",
          ...(memorySearch === undefined ? {} : { memorySearch }),
          ...(sandbox === undefined ? {} : { sandbox }),
        },
      },
      tools,
    }),
    nativeProviders: [faux.provider],
  });
  harnesses.push(harness);
  return harness;
}
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
});

interface Seen {
  tools: string[];
  systemPrompt: string;
  results: { toolName: string; isError: boolean; text: string }[];
}

function seenIn(ctx: Context): Seen {
  return {
    tools: ctx.messages.flatMap((message) =>
      message.role === "system" ? (message.toolsAdded ?? []).map((tool) => tool.name) : [],
    ),
    systemPrompt: ctx.messages
      .filter((message): message is SystemMessage => message.role === "system")
      .map((message) => getSystemMessageText(message))
      .join("\n"),
    results: ctx.messages.flatMap((message) =>
      message.role === "toolResult"
        ? [
            {
              toolName: message.toolName,
              isError: message.isError,
              text: message.content.map((block) => (block.type === "text" ? block.text : "")).join(""),
            },
          ]
        : [],
    ),
  };
}

/** One turn where the model calls `tool` with `args`, then answers; what it saw on each request. */
async function callOnce(
  harness: Harness,
  sessionKey: string,
  tool: string,
  args: Record<string, unknown>,
  overrides: Parameters<Harness["context"]>[1] = {},
) {
  const requests: Seen[] = [];
  faux.setResponses([
    (ctx) => {
      requests.push(seenIn(ctx));
      return fauxAssistantMessage([fauxToolCall(tool, args as never, { id: `t${Date.now()}` })], {
        stopReason: "toolUse",
      });
    },
    (ctx) => {
      requests.push(seenIn(ctx));
      return fauxAssistantMessage("done");
    },
  ]);
  const context = await harness.context(sessionKey, overrides);
  const result = await executeTurn(context, { prompt: "go", timeoutMs: 60_000, entryPoint: "agent" });
  expect(result.status).toBe("ok");
  return { requests, lastResult: requests.at(-1)?.results.at(-1) };
}

const ON = { enabled: true };

describe("memory_search and memory_get called by a model", () => {
  it("finds what another session wrote to memory/*.md, reads its lines, and finds a hand edit on the next turn", async () => {
    const harness = await harnessWith(ON);
    // Session one: the model writes a fact to a memory file with `write`.
    const wrote = await callOnce(harness, "agent:main:one", "write", {
      path: "memory/2026-11-27.md",
      content: "# Infra\nThe staging host is db-7.\nBackups run at 03:00.\n",
    });
    expect(wrote.lastResult).toMatchObject({ toolName: "write", isError: false });
    expect(wrote.requests[0]?.tools).toEqual(expect.arrayContaining(["memory_search", "memory_get"]));
    expect(wrote.requests[0]?.systemPrompt).toContain("## Memory");

    // Session two: memory_search finds it, memory_get returns the lines.
    const found = await callOnce(harness, "agent:main:two", "memory_search", { query: "staging host" });
    expect(found.lastResult).toMatchObject({ toolName: "memory_search", isError: false });
    expect(found.lastResult?.text).toBe(
      "memory/2026-11-27.md#L1-L3\n# Infra\nThe staging host is db-7.\nBackups run at 03:00.",
    );
    const read = await callOnce(harness, "agent:main:two", "memory_get", {
      path: "memory/2026-11-27.md",
      from: 2,
      lines: 1,
    });
    expect(read.lastResult).toEqual({
      toolName: "memory_get",
      isError: false,
      text: "The staging host is db-7.",
    });

    // The index is in the agent's database (no second one), with the workspace's file in it.
    const agentDb = new DatabaseSync(harness.store.agentDatabasePath("main"), { readOnly: true });
    expect(agentDb.prepare("SELECT path FROM memory_files").all()).toEqual([
      { path: "memory/2026-11-27.md" },
    ]);
    agentDb.close();

    // Edited by hand: the next search sees the new text, not the old.
    const file = join(harness.workspaceDir, "memory", "2026-11-27.md");
    writeFileSync(file, "# Infra\nThe staging host moved to db-9.\n");
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const moved = await callOnce(harness, "agent:main:two", "memory_search", { query: "db-9" });
    expect(moved.lastResult?.text).toBe(
      "memory/2026-11-27.md#L1-L2\n# Infra\nThe staging host moved to db-9.",
    );
    const backups = await callOnce(harness, "agent:main:two", "memory_search", { query: "backups" });
    expect(backups.lastResult?.text).toBe("No matches in memory.");
  }, 120_000);

  it("refuses paths outside the memory files and memory files that lead outside the workspace", async () => {
    const harness = await harnessWith(ON);
    writeFileSync(join(harness.root, "secret.md"), "the password is hunter2\n");
    mkdirSync(join(harness.workspaceDir, "memory"), { recursive: true });
    symlinkSync(join(harness.root, "secret.md"), join(harness.workspaceDir, "memory", "linked.md"));
    for (const path of ["../secret.md", "/etc/passwd", "memory/../../secret.md"]) {
      const { lastResult } = await callOnce(harness, "agent:main:out", "memory_get", { path });
      expect(lastResult?.isError).toBe(true);
      expect(lastResult?.text).toContain("is not a memory file (MEMORY.md, USER.md or memory/<name>.md)");
    }
    const linked = await callOnce(harness, "agent:main:out", "memory_get", { path: "memory/linked.md" });
    expect(linked.lastResult).toMatchObject({
      isError: true,
      text: "memory_get: no memory file memory/linked.md",
    });
    const searched = await callOnce(harness, "agent:main:out", "memory_search", { query: "hunter2" });
    expect(searched.lastResult?.text).toBe("No matches in memory.");
  }, 120_000);

  it("is not offered, nor the Memory section, when memorySearch is off, by default, or the policy denies it", async () => {
    for (const [memorySearch, tools] of [
      [{ enabled: false }, { profile: "full" }],
      [undefined, { profile: "full" }],
      [ON, { profile: "full", deny: ["group:memory"] }],
      [ON, { profile: "full", deny: ["memory_search", "memory_get"] }],
    ] as const) {
      const harness = await harnessWith(memorySearch, tools);
      writeFileSync(join(harness.workspaceDir, "MEMORY.md"), "Ada prefers tea.\n");
      const { requests, lastResult } = await callOnce(harness, "agent:main:off", "memory_search", {
        query: "tea",
      });
      expect(requests[0]?.tools).toContain("read");
      expect(requests[0]?.tools).not.toContain("memory_search");
      expect(requests[0]?.tools).not.toContain("memory_get");
      expect(requests[0]?.systemPrompt).not.toContain("## Memory");
      expect(lastResult?.isError).toBe(true);
      expect(lastResult?.text).not.toContain("Ada prefers tea");
    }
  }, 120_000);

  it("an agent's own memorySearch wins over agents.defaults'", async () => {
    const harness = await harnessWith({ enabled: false });
    const config = {
      ...harness.config,
      agents: {
        ...harness.config.agents,
        list: [{ id: "main", memorySearch: { enabled: true } }],
      },
    } as typeof harness.config;
    const context = await harness.context("agent:main:own", { overrides: { config } });
    const sandbox = await prepareTurnSandbox(context, { emit: () => {} } as never);
    expect(turnTools(context, sandbox, []).map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["memory_search", "memory_get"]),
    );
  });

  it("gives every turn of a session the same memory tool objects (the warm session is kept)", async () => {
    const harness = await harnessWith(ON);
    // One policy for the session, as the kernel keeps it for a prepared agent.
    const { toolPolicy } = await harness.context("agent:main:warm");
    const memoryToolsOf = async () => {
      const context = await harness.context("agent:main:warm", { overrides: { toolPolicy } });
      const sandbox = await prepareTurnSandbox(context, { emit: () => {} } as never);
      return turnTools(context, sandbox, []).filter((tool) => tool.name.startsWith("memory_"));
    };
    const first = await memoryToolsOf();
    const second = await memoryToolsOf();
    expect(first.map((tool) => tool.name)).toEqual(["memory_search", "memory_get"]);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).toBe(first[1]);
  });

  it("in a sandboxed session: the sandbox's workspace, where its write went; the sandbox policy decides", async () => {
    const harness = await harnessWith(
      ON,
      { profile: "full", sandbox: { tools: { alsoAllow: ["group:memory"] } } },
      { mode: "all", scope: "session" },
    );
    // The policy as the kernel resolves it for a sandboxed session.
    const sandboxedPolicy = (config: Harness["config"]) =>
      resolveToolPolicy(config, {
        agentId: "main",
        modelProvider: "faux",
        modelId: "faux-1",
        sandboxed: true,
      });
    const overrides = { overrides: { toolPolicy: sandboxedPolicy(harness.config) } };
    const wrote = await callOnce(
      harness,
      "agent:main:boxed",
      "write",
      { path: "memory/box.md", content: "The boxed fact is quince.\n" },
      overrides,
    );
    expect(wrote.lastResult).toMatchObject({ toolName: "write", isError: false });
    expect(existsSync(join(harness.workspaceDir, "memory", "box.md"))).toBe(false);
    const found = await callOnce(
      harness,
      "agent:main:boxed",
      "memory_search",
      { query: "quince" },
      overrides,
    );
    expect(found.requests[0]?.tools).toEqual(expect.arrayContaining(["memory_search", "memory_get"]));
    expect(found.lastResult?.text).toBe("memory/box.md#L1-L1\nThe boxed fact is quince.");

    // Without alsoAllow the sandbox's default allowlist (OpenClaw's) leaves the memory tools out.
    const plain = await harnessWith(ON, { profile: "full" }, { mode: "all", scope: "session" });
    const denied = await callOnce(
      plain,
      "agent:main:boxed",
      "memory_search",
      { query: "quince" },
      {
        overrides: { toolPolicy: sandboxedPolicy(plain.config) },
      },
    );
    expect(denied.requests[0]?.tools).not.toContain("memory_search");
    expect(denied.lastResult?.isError).toBe(true);
  }, 120_000);
});
