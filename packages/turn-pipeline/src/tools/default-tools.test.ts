import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@agent-kernel/config";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { resolveToolPolicy } from "@agent-kernel/tool-policy";
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyToolPolicy, buildDefaultTools, DefaultToolCache } from "./default-tools.ts";
import { capOutput } from "./exec-tool.ts";
import { hostToolSandbox } from "./tool-sandbox.ts";

let root: string;
let workspace: string;
let outside: string;
let store: SqliteSessionStore;
let tools: Map<string, ToolDefinition>;
const sent: string[] = [];

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "default-tools-"));
  workspace = join(root, "workspace");
  outside = join(root, "outside");
  mkdirSync(workspace);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "top secret");
  writeFileSync(join(workspace, "inside.txt"), "hello inside");
  store = await openSessionStore({ stateDir: join(root, "state") });
  sent.length = 0;
  const list = buildDefaultTools({
    workspaceDir: workspace,
    agentId: "main",
    store,
    messageSink: {
      send: async (message) => {
        sent.push(message.text);
        return { messageId: "1" };
      },
    },
    execTimeoutSeconds: 1,
    execMaxOutputBytes: 64,
  });
  tools = new Map(list.map((tool) => [tool.name, tool]));
});
afterEach(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

async function call(name: string, params: Record<string, unknown>): Promise<string> {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const result = await tool.execute("call-1", params as never, undefined, undefined, undefined as never);
  return result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

describe("the default tools", () => {
  it("read/write/edit work inside the workspace", async () => {
    expect(await call("read", { path: "inside.txt" })).toContain("hello inside");
    await call("write", { path: "sub/new.txt", content: "fresh" });
    expect(readFileSync(join(workspace, "sub/new.txt"), "utf8")).toBe("fresh");
    await call("edit", {
      path: join(workspace, "sub/new.txt"),
      edits: [{ oldText: "fresh", newText: "edited" }],
    });
    expect(readFileSync(join(workspace, "sub/new.txt"), "utf8")).toBe("edited");
  });

  it("refuses .., absolute paths outside and ~", async () => {
    await expect(call("read", { path: "../outside/secret.txt" })).rejects.toThrow(/outside the workspace/);
    await expect(call("read", { path: join(outside, "secret.txt") })).rejects.toThrow(
      /outside the workspace/,
    );
    await expect(call("write", { path: "../escape.txt", content: "x" })).rejects.toThrow(
      /outside the workspace/,
    );
    await expect(call("read", { path: "~/.ssh/id_rsa" })).rejects.toThrow(/home directory/);
    await expect(
      call("edit", { path: "../outside/secret.txt", edits: [{ oldText: "top", newText: "no" }] }),
    ).rejects.toThrow(/outside the workspace/);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("top secret");
  });

  it("refuses symlinks that leave the workspace, for reading and for writing through them", async () => {
    symlinkSync(join(outside, "secret.txt"), join(workspace, "link.txt"));
    symlinkSync(outside, join(workspace, "dirlink"));
    await expect(call("read", { path: "link.txt" })).rejects.toThrow(/symbolic link/);
    await expect(call("write", { path: "dirlink/planted.txt", content: "x" })).rejects.toThrow(
      /symbolic link/,
    );
    await expect(call("write", { path: "link.txt", content: "x" })).rejects.toThrow(/symbolic link/);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("top secret");
    symlinkSync(join(workspace, "inside.txt"), join(workspace, "good-link.txt"));
    expect(await call("read", { path: "good-link.txt" })).toContain("hello inside");
  });

  it("exec runs in the workspace, caps its output and stops at the timeout", async () => {
    expect((await call("exec", { command: "pwd" })).trim()).toBe(workspace);
    const long = await call("exec", { command: "seq 1 500" });
    expect(long).toMatch(/^\[output capped: showing the last \d+ of \d+ bytes\]/);
    expect(long.trim().endsWith("500")).toBe(true);
    await expect(call("exec", { command: "sleep 5", timeout: 30 })).rejects.toThrow(
      /timed out after 1 seconds/,
    );
  });

  it("message sends through the sink; sessions tools read the store", async () => {
    expect(await call("message", { text: "hi there" })).toBe("sent (id 1)");
    expect(sent).toEqual(["hi there"]);
    const session = await store.sessions.ensure({ agentId: "main", sessionKey: "agent:main:x" });
    expect(await call("sessions_list", {})).toContain("agent:main:x");
    expect(await call("sessions_list", {})).toContain(session.sessionId);
    await expect(call("sessions_history", { sessionKey: "agent:main:nope" })).rejects.toThrow(/no session/);
    expect(await call("sessions_history", { sessionKey: "agent:main:x" })).toBe("(no messages)");
  });

  it("tool-policy filters the list", async () => {
    const policy = resolveToolPolicy(parseConfig({ tools: { profile: "full", deny: ["exec", "message"] } }), {
      agentId: "main",
    });
    const allowed = applyToolPolicy([...tools.values()], policy).map((tool) => tool.name);
    expect(allowed.sort()).toEqual([
      "apply_patch",
      "edit",
      "process",
      "read",
      "sessions_history",
      "sessions_list",
      "web_fetch",
      "write",
    ]);
  });

  it("the tool cache reuses the turn-independent tools, applies the policy and gives each turn its own message tool", async () => {
    const config = parseConfig({ tools: { profile: "full", deny: ["exec"] } });
    const policy = resolveToolPolicy(config, { agentId: "main" });
    const cache = new DefaultToolCache();
    const turnTexts: string[][] = [[], []];
    const sink = {
      send: async (message: { text: string }) => {
        sent.push(message.text);
        return {};
      },
    };
    const forTurn = (index: 0 | 1, policyOfTurn = policy) =>
      cache.toolsFor(
        {
          workspaceDir: workspace,
          agentId: "main",
          store,
          messageSink: sink,
          onMessageSent: (text) => turnTexts[index]?.push(text),
        },
        policyOfTurn,
      );
    const first = forTurn(0);
    const second = forTurn(1);
    const names = [
      "read",
      "write",
      "edit",
      "sessions_list",
      "sessions_history",
      "web_fetch",
      "apply_patch",
      "process",
      "message",
    ];
    expect(first.map((tool) => tool.name)).toEqual(names);
    expect(
      applyToolPolicy(
        buildDefaultTools({ workspaceDir: workspace, agentId: "main", store, messageSink: sink }),
        policy,
      ).map((tool) => tool.name),
    ).toEqual(names);
    // Shared: the same wrapped objects; per turn: the message tool, reporting to its own turn.
    expect(second.slice(0, 7)).toEqual(first.slice(0, 7));
    expect(second[0]).toBe(first[0]);
    expect(second[8]).not.toBe(first[8]);
    const message = second[8];
    if (!message) throw new Error("no message tool");
    await message.execute("m1", { text: "to turn two" } as never, undefined, undefined, undefined as never);
    expect(turnTexts).toEqual([[], ["to turn two"]]);
    // The wrapped tools still check their policy at every call and stay confined.
    const read = first[0];
    if (!read) throw new Error("no read tool");
    await expect(
      read.execute(
        "r1",
        { path: "../outside/secret.txt" } as never,
        undefined,
        undefined,
        undefined as never,
      ),
    ).rejects.toThrow(/outside the workspace/);
    // Another policy object gets its own wrapping; other limits get their own tools.
    const stricter = resolveToolPolicy(parseConfig({ tools: { profile: "full", deny: ["exec", "write"] } }), {
      agentId: "main",
    });
    expect(forTurn(0, stricter).map((tool) => tool.name)).toEqual(names.filter((name) => name !== "write"));
    const otherLimits = cache.toolsFor(
      { workspaceDir: workspace, agentId: "main", store, execTimeoutSeconds: 5 },
      policy,
    );
    expect(otherLimits.map((tool) => tool.name)).toEqual(names.slice(0, 8));
    expect(otherLimits[0]).not.toBe(first[0]);
  });

  it("memory tools search the directory the tools work in: in a sandbox, the host directory its cwd is mounted from", async () => {
    const sandboxDir = join(root, "sandbox-workspace");
    mkdirSync(join(sandboxDir, "memory"), { recursive: true });
    writeFileSync(join(sandboxDir, "memory", "notes.md"), "The sandbox note says kiwi.\n");
    writeFileSync(join(workspace, "MEMORY.md"), "The agent workspace says mango.\n");
    const sandbox = {
      ...hostToolSandbox(sandboxDir),
      sandboxed: true,
      cwd: "/workspace",
      mounts: [
        { path: "/workspace", hostPath: sandboxDir, writable: true },
        { path: "/agent", hostPath: workspace, writable: false },
      ],
    };
    const search = buildDefaultTools({
      workspaceDir: workspace,
      agentId: "main",
      store,
      sandbox,
      memory: true,
    }).find((tool) => tool.name === "memory_search");
    if (search === undefined) throw new Error("no memory_search");
    const run = async (query: string) => {
      const result = await search.execute("m1", { query } as never, undefined, undefined, undefined as never);
      return result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    };
    expect(await run("kiwi")).toBe("memory/notes.md#L1-L1\nThe sandbox note says kiwi.");
    expect(await run("mango")).toBe("No matches in memory.");
    // On the host: the workspace's own files; off (the default): no memory tools.
    const onHost = buildDefaultTools({ workspaceDir: workspace, agentId: "main", store, memory: true });
    expect(onHost.map((tool) => tool.name)).toEqual(expect.arrayContaining(["memory_search", "memory_get"]));
    expect(
      buildDefaultTools({ workspaceDir: workspace, agentId: "main", store }).map((tool) => tool.name),
    ).not.toContain("memory_search");
    // A sandbox whose working directory no mount holds: nowhere to find the files, no memory tools.
    const unmounted = { ...sandbox, cwd: "/elsewhere" };
    expect(
      buildDefaultTools({
        workspaceDir: workspace,
        agentId: "main",
        store,
        sandbox: unmounted,
        memory: true,
      }).map((tool) => tool.name),
    ).not.toContain("memory_search");
  });

  it("capOutput keeps the tail on a character boundary", () => {
    expect(capOutput("short", 100)).toBe("short");
    const capped = capOutput(`${"é".repeat(50)}END`, 11);
    expect(capped.endsWith("END")).toBe(true);
    expect(capped).not.toContain("\uFFFD");
  });
});
