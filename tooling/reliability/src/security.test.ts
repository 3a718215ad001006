// Security checks through the real code paths: the file tools the turn-pipeline gives a run stay inside the
// workspace (`..`, absolute paths, symlinks out — directly and in a real turn over HTTP), owner-only tools are
// denied to other senders, and a provider key in the config or the environment is never stored.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseConfig } from "@agent-kernel/config";
import { type FakeLlm, reply, startFakeLlm, toolCall } from "@agent-kernel/fake-llm";
import { createKernel } from "@agent-kernel/kernel";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import {
  enforceToolPolicy,
  OWNER_ONLY_TOOLS,
  resolveToolPolicy,
  ToolPolicyBlockedError,
} from "@agent-kernel/tool-policy";
import { buildDefaultTools, WorkspacePathError } from "@agent-kernel/turn-pipeline";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { countInputs } from "./support/summary.ts";
import { fakeLlmConfig } from "./support/turn-setup.ts";

const inputs = countInputs("security properties");

let root: string;
let workspaceDir: string;
let outsideDir: string;
let store: SqliteSessionStore;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "reliability-security-"));
  workspaceDir = join(root, "workspace");
  outsideDir = join(root, "outside");
  mkdirSync(workspaceDir);
  mkdirSync(outsideDir);
  writeFileSync(join(outsideDir, "secret.txt"), "outside secret\n");
  writeFileSync(join(workspaceDir, "inside.txt"), "inside\n");
  // Links inside the workspace that lead out of it: to a directory and to a file.
  symlinkSync(outsideDir, join(workspaceDir, "link-dir"));
  symlinkSync(join(outsideDir, "secret.txt"), join(workspaceDir, "link-file.txt"));
  store = await openSessionStore({ stateDir: join(root, "state") });
});

afterEach(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

type ToolCallable = {
  readonly name: string;
  execute(toolCallId: string, params: unknown, signal?: AbortSignal): Promise<unknown>;
};

function fileTools(): Map<string, ToolCallable> {
  const tools = buildDefaultTools({ workspaceDir, agentId: "main", store }) as unknown as ToolCallable[];
  return new Map(
    tools.filter((tool) => ["read", "write", "edit"].includes(tool.name)).map((t) => [t.name, t]),
  );
}

function tool(tools: Map<string, ToolCallable>, name: string): ToolCallable {
  const found = tools.get(name);
  if (found === undefined) throw new Error(`the default tools have no ${name}`);
  return found;
}

/** Every file under `dir` with its content (links not followed), to prove nothing outside changed. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (statSync(path).isFile()) files[name] = readFileSync(path, "utf8");
  }
  return files;
}

const ESCAPES = [
  "../outside/secret.txt",
  "../outside/new.txt",
  "a/../../outside/new.txt",
  "./../outside/secret.txt",
  "link-dir/secret.txt",
  "link-dir/new.txt",
  "link-file.txt",
  "~/x.txt",
  "",
  "bad\u0000name",
];

describe("file tools stay inside the workspace", () => {
  it("read, write and edit refuse `..`, absolute paths outside, `~` and symlinks out, with a clear error", async () => {
    const tools = fileTools();
    const outsideBefore = snapshot(outsideDir);
    const escapes = [
      ...ESCAPES,
      join(outsideDir, "secret.txt"),
      join(outsideDir, "new.txt"),
      "/etc/hostname",
    ];
    for (const path of escapes) {
      for (const [name, params] of [
        ["read", { path }],
        ["write", { path, content: "pwned\n" }],
        ["edit", { path, edits: [{ oldText: "outside secret", newText: "pwned" }] }],
      ] as const) {
        const call = tool(tools, name).execute("call-1", params);
        await expect(call, `${name} ${JSON.stringify(path)}`).rejects.toBeInstanceOf(WorkspacePathError);
        await expect(call, `${name} ${JSON.stringify(path)}`).rejects.toThrow(/path/);
      }
    }
    expect(snapshot(outsideDir)).toEqual(outsideBefore);
    // Paths that stay inside still work, absolute ones included.
    await tool(tools, "write").execute("call-2", { path: "sub/../ok.txt", content: "fine\n" });
    await tool(tools, "write").execute("call-3", { path: join(workspaceDir, "abs.txt"), content: "fine\n" });
    expect(readFileSync(join(workspaceDir, "ok.txt"), "utf8")).toBe("fine\n");
    expect(readFileSync(join(workspaceDir, "abs.txt"), "utf8")).toBe("fine\n");
  });

  it("any path a model may send: refused, or its real location is inside the workspace", async () => {
    const tools = fileTools();
    const segment = fc.constantFrom(
      "..",
      ".",
      "a",
      "b",
      "link-dir",
      "link-file.txt",
      "inside.txt",
      "",
      "~",
      "x",
    );
    const pathArbitrary = fc.oneof(
      fc.array(segment, { minLength: 1, maxLength: 6 }).map((parts) => parts.join("/")),
      fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join("/")}`),
      fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => join(workspaceDir, ...parts)),
      fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => join(outsideDir, ...parts)),
    );
    const realWorkspace = realpathSync(workspaceDir);
    const outsideBefore = snapshot(outsideDir);
    let written = 0;
    await fc.assert(
      fc.asyncProperty(pathArbitrary, async (path) => {
        const target = `${path.replace(/\/+$/, "")}/f-${written}.txt`;
        try {
          await tool(tools, "write").execute("call", { path: target, content: "x" });
        } catch (error) {
          // Refused by confinement, or an ordinary file-system error inside the workspace (a file used as a
          // directory): never a write outside.
          if (error instanceof WorkspacePathError) return;
          expect(String(error)).toMatch(/ENOTDIR|EEXIST|EISDIR|not a directory|already exists/i);
          return;
        }
        written += 1;
        const real = realpathSync(target.startsWith("/") ? target : join(workspaceDir, target));
        const rel = relative(realWorkspace, real);
        expect(rel.startsWith("..") || rel.startsWith("/"), `${target} was written at ${real}`).toBe(false);
      }),
      { numRuns: inputs(200) },
    );
    expect(snapshot(outsideDir)).toEqual(outsideBefore);
    expect(written, "some generated paths were inside and written").toBeGreaterThan(0);
  });

  it("in a real turn over HTTP, a model's write to ../ fails as a tool error and writes nothing outside", async () => {
    const llm: FakeLlm = await startFakeLlm({
      scenario: {
        steps: [
          toolCall("write", { path: "../outside/escaped.txt", content: "pwned" }),
          toolCall("read", { path: "link-dir/secret.txt" }),
          reply("I could not write there."),
        ],
      },
    });
    try {
      const config = fakeLlmConfig({
        baseUrl: llm.baseUrlFor("openai"),
        stateDir: join(root, "state"),
        workspaceDir,
      });
      const kernel = createKernel({ config, store, paths: { env: {}, homeDir: root, cwd: root } });
      const outcome = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "escape" }), {
        prompt: "write outside",
      });
      expect(outcome.status).toBe("ok");
      expect(existsSync(join(outsideDir, "escaped.txt"))).toBe(false);
      // What the model got back: errors naming the workspace, and never the outside file's content.
      type WireMessage = { role: string; content: unknown };
      const sent = (index: number) =>
        (llm.requests[index]?.body as { messages?: WireMessage[] } | undefined)?.messages ?? [];
      const toolResults = [...sent(1), ...sent(2)]
        .filter((message) => message.role === "tool")
        .map((message) => JSON.stringify(message.content));
      expect(toolResults.length).toBeGreaterThanOrEqual(2);
      for (const result of toolResults) {
        expect(result).toMatch(/outside the workspace|leaves the workspace/);
        expect(result).not.toContain("outside secret");
      }
    } finally {
      await llm.close();
    }
  });
});

describe("owner-only tools", () => {
  const config = parseConfig({ tools: { profile: "full" } }, { env: {} });

  it("are denied to a sender who is not the owner and allowed to the owner", () => {
    expect(OWNER_ONLY_TOOLS.length).toBeGreaterThan(0);
    const stranger = resolveToolPolicy(config, { senderIsOwner: false, senderId: "telegram:999" });
    const owner = resolveToolPolicy(config, { senderIsOwner: true, senderId: "telegram:1" });
    for (const name of OWNER_ONLY_TOOLS) {
      expect(stranger.isAllowed(name), `${name} for a stranger`).toBe(false);
      expect(stranger.decide(name), name).toMatchObject({ allowed: false, kind: "owner-only" });
      expect(owner.isAllowed(name), `${name} for the owner`).toBe(true);
    }
    // A tool flagged owner-only by the caller (e.g. exec on a shared channel) too.
    const flagged = resolveToolPolicy(config, { senderIsOwner: false, ownerOnlyTools: ["exec"] });
    expect(flagged.isAllowed("exec")).toBe(false);
    expect(flagged.isAllowed("read")).toBe(true);
  });

  it("a call to one that slipped through is refused at execution with the decision", async () => {
    const stranger = resolveToolPolicy(config, { senderIsOwner: false });
    const name = OWNER_ONLY_TOOLS[0] ?? "gateway";
    let ran = false;
    const wrapped = enforceToolPolicy(
      {
        name,
        description: "owner-only",
        parameters: { type: "object", properties: {} },
        execute: async () => {
          ran = true;
          return { content: [{ type: "text", text: "ran" }], details: {} };
        },
      },
      { policy: stranger },
    ) as unknown as ToolCallable;
    await expect(wrapped.execute("call", {})).rejects.toBeInstanceOf(ToolPolicyBlockedError);
    await expect(wrapped.execute("call", {})).rejects.toThrow(new RegExp(`"${name}" is not available`));
    expect(ran).toBe(false);
  });
});

describe("secrets", () => {
  it.each([
    ["an ${ENV} reference in the config", "env"],
    ["written into the config itself", "literal"],
  ] as const)("a provider key (%s) reaches the provider and is never stored", async (_how, source) => {
    const secret = `sk-reliability-${Math.random().toString(36).slice(2)}-SECRETTAIL`;
    const llm = await startFakeLlm({
      scenario: {
        steps: [
          toolCall("write", { path: "notes.md", content: "# Notes\n" }),
          reply("Done."),
          { type: "error", fault: "auth" },
          { type: "error", fault: "auth" },
        ],
      },
    });
    try {
      const env: Record<string, string> =
        source === "env" ? { RELIABILITY_PROVIDER_KEY: secret, OPENAI_API_KEY: secret } : {};
      const config = fakeLlmConfig({
        baseUrl: llm.baseUrlFor("openai"),
        stateDir: join(root, "state"),
        workspaceDir,
        env,
        extra: {
          auth: {
            profiles: {
              "local:me": {
                provider: "local",
                mode: "api_key",
                apiKey: source === "env" ? "${RELIABILITY_PROVIDER_KEY}" : secret,
              },
            },
          },
        },
      });
      const kernel = createKernel({ config, store, paths: { env, homeDir: root, cwd: root } });
      const prepared = await kernel.prepareSession({ sessionKey: "secret" });
      const ok = await kernel.executeTurn(prepared, { prompt: "write notes" });
      expect(ok.status).toBe("ok");
      // A failing turn too: error paths record messages and reasons.
      const failed = await kernel.executeTurn(await kernel.prepareSession({ sessionKey: "secret" }), {
        prompt: "again",
      });
      expect(failed.status).toBe("error");
      expect(llm.requests.map((request) => request.apiKeySuffix)).toContain("TAIL");
    } finally {
      await llm.close();
    }
    await store.close();
    store = await openSessionStore({ stateDir: join(root, "state") });
    const stateFiles = readdirSync(join(root, "state"), { recursive: true }) as string[];
    let bytes = 0;
    // The search sees what was stored: the turn's prompt is found in the same bytes.
    let promptSeen = false;
    for (const name of stateFiles) {
      const path = join(root, "state", name);
      if (!statSync(path).isFile()) continue;
      const content = readFileSync(path);
      bytes += content.length;
      if (content.includes("write notes")) promptSeen = true;
      expect(content.includes(secret), `${name} holds the key`).toBe(false);
      expect(content.includes(Buffer.from(secret, "utf16le")), `${name} holds the key (UTF-16)`).toBe(false);
      expect(content.includes(Buffer.from(secret).toString("base64")), `${name} holds the key (base64)`).toBe(
        false,
      );
    }
    expect(stateFiles.some((name) => name.endsWith(".sqlite"))).toBe(true);
    expect(bytes).toBeGreaterThan(0);
    expect(promptSeen, "the stored prompt is visible to the search").toBe(true);
  });
});
