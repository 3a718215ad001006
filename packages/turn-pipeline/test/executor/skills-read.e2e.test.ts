// Skills the model can read: pi for real (its faux provider), turns through `executeTurn`. The catalog names a
// managed skill's SKILL.md (under the state dir, outside the workspace); the model reads it, and a file beside
// it, with `read` at exactly the listed location — on the host and in a bubblewrap sandbox (where the folder is
// mounted read-only at /skills/<name>). A path next to the skill folder that is not a loaded skill's is still
// refused, and the skill cannot be written.
import { chownSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SANDBOX_HOST_ID } from "@agent-kernel/sandbox";
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
import { createHarness, fauxConfig, type Harness } from "./harness.ts";

let faux: FauxProviderHandle;
const harnesses: Harness[] = [];
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
});

const SKILL_TEXT =
  "---\nname: weather\ndescription: Forecasts for a city.\n---\nRead forecast.txt beside me.\n";

async function harnessWithManagedSkill(sandbox?: unknown): Promise<Harness> {
  faux = fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1", reasoning: true, input: ["text"], contextWindow: 200_000, maxTokens: 8192 }],
    tokenSize: { min: 4, max: 4 },
  });
  const harness = await createHarness({
    config: fauxConfig({
      agents: { defaults: { model: "faux/faux-1", ...(sandbox === undefined ? {} : { sandbox }) } },
    }),
    nativeProviders: [faux.provider],
  });
  harnesses.push(harness);
  const managed = join(harness.stateDir, "skills");
  mkdirSync(join(managed, "weather"), { recursive: true });
  mkdirSync(join(managed, "not-a-skill"), { recursive: true });
  writeFileSync(join(managed, "weather", "SKILL.md"), SKILL_TEXT);
  writeFileSync(join(managed, "weather", "forecast.txt"), "Sunny in Lisbon.\n");
  writeFileSync(join(managed, "not-a-skill", "secret.txt"), "not a skill's file\n");
  writeFileSync(join(managed, "loose.txt"), "loose in the managed folder\n");
  return harness;
}

interface ToolResult {
  readonly toolName: string;
  readonly isError: boolean;
  readonly text: string;
}

const systemPromptOf = (ctx: Context): string =>
  ctx.messages
    .filter((message): message is SystemMessage => message.role === "system")
    .map((message) => getSystemMessageText(message))
    .join("\n");

const lastResultOf = (ctx: Context): ToolResult | undefined =>
  ctx.messages
    .flatMap((message) =>
      message.role === "toolResult"
        ? [
            {
              toolName: message.toolName,
              isError: message.isError,
              text: message.content.map((block) => (block.type === "text" ? block.text : "")).join(""),
            },
          ]
        : [],
    )
    .at(-1);

/**
 * One turn: the model reads the catalog's location for "weather", then calls each tool `calls` makes of it
 * (in order), then answers. Returns the location and each call's result.
 */
async function turnCalling(
  harness: Harness,
  sessionKey: string,
  calls: (location: string) => readonly { readonly tool: string; readonly args: Record<string, unknown> }[],
  overrides: Parameters<Harness["context"]>[1] = {},
  onFirstRequest?: (ctx: Context) => void,
): Promise<{ location: string; results: ToolResult[] }> {
  let location = "";
  const results: ToolResult[] = [];
  let planned: ReturnType<typeof calls> = [];
  const step = (index: number) => (ctx: Context) => {
    if (index === 0) {
      location =
        /<name>weather<\/name>[\s\S]*?<location>([^<]*)<\/location>/.exec(systemPromptOf(ctx))?.[1] ?? "";
      planned = calls(location);
      onFirstRequest?.(ctx);
    } else {
      const result = lastResultOf(ctx);
      if (result !== undefined) results.push(result);
    }
    const call = planned[index];
    return call === undefined
      ? fauxAssistantMessage("done")
      : fauxAssistantMessage([fauxToolCall(call.tool, call.args as never, { id: `c${index}` })], {
          stopReason: "toolUse",
        });
  };
  faux.setResponses(Array.from({ length: 8 }, (_, index) => step(index)));
  const context = await harness.context(sessionKey, overrides);
  const result = await executeTurn(context, { prompt: "weather?", timeoutMs: 90_000, entryPoint: "agent" });
  expect(result.status).toBe("ok");
  return { location, results };
}

describe("a managed skill read by the model through `read`", () => {
  it("unsandboxed: reads SKILL.md at its listed host path and a file beside it; nothing else outside the workspace", async () => {
    const harness = await harnessWithManagedSkill();
    const managed = join(harness.stateDir, "skills");
    const { location, results } = await turnCalling(harness, "agent:main:host", (skill) => [
      { tool: "read", args: { path: skill } },
      { tool: "read", args: { path: join(skill, "..", "forecast.txt") } },
      { tool: "read", args: { path: join(managed, "not-a-skill", "secret.txt") } },
      { tool: "read", args: { path: join(managed, "loose.txt") } },
      { tool: "read", args: { path: join(skill, "..", "..", "not-a-skill", "secret.txt") } },
      { tool: "write", args: { path: skill, content: "overwritten" } },
    ]);
    expect(location).toBe(join(managed, "weather", "SKILL.md"));
    expect(results[0]).toMatchObject({ toolName: "read", isError: false });
    expect(results[0]?.text).toContain("Read forecast.txt beside me.");
    expect(results[1]).toMatchObject({ isError: false, text: expect.stringContaining("Sunny in Lisbon.") });
    for (const refused of results.slice(2, 5)) {
      expect(refused).toMatchObject({ toolName: "read", isError: true });
      expect(refused.text).toContain("is outside the workspace");
      expect(refused.text).not.toMatch(/not a skill's file|loose in the managed folder/);
    }
    expect(results[5]).toMatchObject({
      toolName: "write",
      isError: true,
      text: expect.stringContaining("read-only"),
    });
    expect(readFileSync(location, "utf8")).toBe(SKILL_TEXT);
  }, 120_000);

  it("in a bubblewrap sandbox: the catalog lists /skills/weather/SKILL.md, which `read` and `exec` reach; the host paths stay out", async () => {
    const harness = await harnessWithManagedSkill({ mode: "all", scope: "session" });
    const managed = join(harness.stateDir, "skills");
    // The policy as the kernel resolves it for a sandboxed session.
    const toolPolicy = resolveToolPolicy(harness.config, {
      agentId: "main",
      modelProvider: "faux",
      modelId: "faux-1",
      sandboxed: true,
    });
    const { location, results } = await turnCalling(
      harness,
      "agent:main:boxed",
      (skill) => [
        { tool: "read", args: { path: skill } },
        { tool: "read", args: { path: "/skills/weather/forecast.txt" } },
        { tool: "exec", args: { command: "cat /skills/weather/forecast.txt; ls /skills" } },
        { tool: "read", args: { path: join(managed, "weather", "SKILL.md") } },
        { tool: "read", args: { path: join(managed, "not-a-skill", "secret.txt") } },
        { tool: "read", args: { path: "/skills/not-a-skill/secret.txt" } },
        { tool: "write", args: { path: skill, content: "overwritten" } },
      ],
      { overrides: { toolPolicy } },
    );
    expect(location).toBe("/skills/weather/SKILL.md");
    expect(results[0]).toMatchObject({ toolName: "read", isError: false });
    expect(results[0]?.text).toContain("Read forecast.txt beside me.");
    expect(results[1]).toMatchObject({ isError: false, text: expect.stringContaining("Sunny in Lisbon.") });
    expect(results[2]).toMatchObject({ toolName: "exec", isError: false });
    expect(results[2]?.text).toMatch(/Sunny in Lisbon\.\s+weather/);
    for (const refused of results.slice(3, 6)) {
      expect(refused).toMatchObject({ toolName: "read", isError: true });
      expect(refused.text).not.toMatch(/not a skill's file|Read forecast/);
    }
    expect(results[6]).toMatchObject({ toolName: "write", isError: true });
    expect(readFileSync(join(managed, "weather", "SKILL.md"), "utf8")).toBe(SKILL_TEXT);
  }, 120_000);

  it("in a sandbox with the agent workspace mounted: a workspace skill is read where it is, and a link planted in its place leads nowhere on the host", async () => {
    const harness = await harnessWithManagedSkill({ mode: "all", scope: "session", workspaceAccess: "rw" });
    const skillDir = join(harness.workspaceDir, "skills", "local-weather");
    mkdirSync(skillDir, { recursive: true });
    writeFileSync(
      join(skillDir, "SKILL.md"),
      "---\nname: local-weather\ndescription: Local.\n---\nThe workspace's own.\n",
    );
    const secretDir = join(harness.root, "host-secret");
    mkdirSync(secretDir, { recursive: true });
    writeFileSync(join(secretDir, "SKILL.md"), "host secret\n");
    // A root gateway runs a read-write workspace's commands as the workspace's owner, never root.
    if (process.getuid?.() === 0) {
      for (const dir of [harness.workspaceDir, join(harness.workspaceDir, "skills"), skillDir])
        chownSync(dir, SANDBOX_HOST_ID, SANDBOX_HOST_ID);
      chownSync(join(skillDir, "SKILL.md"), SANDBOX_HOST_ID, SANDBOX_HOST_ID);
    }
    const toolPolicy = resolveToolPolicy(harness.config, {
      agentId: "main",
      modelProvider: "faux",
      modelId: "faux-1",
      sandboxed: true,
    });
    const overrides = { overrides: { toolPolicy } };
    const locationOf = (name: string) => (ctx: Context) =>
      new RegExp(`<name>${name}</name>[\\s\\S]*?<location>([^<]*)</location>`).exec(
        systemPromptOf(ctx),
      )?.[1] ?? "";
    let localLocation = "";
    const first = await turnCalling(
      harness,
      "agent:main:rw",
      (managedLocation) => [
        { tool: "read", args: { path: managedLocation } },
        { tool: "read", args: { path: "/workspace/skills/local-weather/SKILL.md" } },
        // Swap the skill's folder for a link to a host folder (the link's text is a host path).
        {
          tool: "exec",
          args: { command: `rm -rf skills/local-weather && ln -s ${secretDir} skills/local-weather` },
        },
      ],
      overrides,
      (ctx) => {
        localLocation = locationOf("local-weather")(ctx);
      },
    );
    expect(first.location).toBe("/skills/weather/SKILL.md");
    expect(localLocation).toBe("/workspace/skills/local-weather/SKILL.md");
    expect(first.results[0]).toMatchObject({
      isError: false,
      text: expect.stringContaining("Read forecast.txt"),
    });
    expect(first.results[1]).toMatchObject({
      isError: false,
      text: expect.stringContaining("The workspace's own."),
    });
    expect(first.results[2]).toMatchObject({ toolName: "exec", isError: false });

    // The next turn of the session lists the same skills (its snapshot); the planted link is not bound.
    const second = await turnCalling(
      harness,
      "agent:main:rw",
      () => [
        { tool: "read", args: { path: "/workspace/skills/local-weather/SKILL.md" } },
        {
          tool: "exec",
          args: { command: "cat /workspace/skills/local-weather/SKILL.md /skills/*/SKILL.md; ls /skills" },
        },
      ],
      overrides,
    );
    expect(second.results[0]).toMatchObject({ toolName: "read", isError: true });
    expect(second.results[1]?.text).not.toContain("host secret");
    expect(second.results[1]?.text).toContain("Read forecast.txt beside me.");
    expect(second.results.map((result) => result.text).join("\n")).not.toContain("host secret");
  }, 120_000);
});
