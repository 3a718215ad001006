// What the model is told, end to end through real HTTP: executor → pi → pi-ai's OpenAI / Anthropic clients →
// tooling/fake-llm. Asserts on the system text of the exact request body the provider receives: the workspace's
// skills listed (name, description, path) and a gated one left out, sections present or absent by config
// (Memory Recall, Model Aliases, Sandbox), and the minimal mode's smaller prompt.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeLlm, reply, startFakeLlm, type WireProvider } from "@agent-kernel/fake-llm";
import { afterEach, describe, expect, it } from "vitest";
import { executeTurn } from "../../src/executor/index.ts";
import { createHarness, type Harness } from "./harness.ts";
import { wireConfig } from "./wire-config.ts";

let llm: FakeLlm | undefined;
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  await llm?.close();
  harness = undefined;
  llm = undefined;
});

/** The system text of a request body in either wire format. */
function systemTextOf(body: unknown): string {
  const request = body as {
    system?: string | { text?: string }[];
    messages?: { role?: string; content?: string | { text?: string }[] }[];
  };
  const text = (content: string | { text?: string }[] | undefined): string =>
    typeof content === "string" ? content : (content ?? []).map((block) => block.text ?? "").join("\n");
  if (request.system !== undefined) return text(request.system);
  return (request.messages ?? [])
    .filter((message) => message.role === "system" || message.role === "developer")
    .map((message) => text(message.content))
    .join("\n");
}

function writeSkill(workspaceDir: string, name: string, frontmatter: string): string {
  const dir = join(workspaceDir, "skills", name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "SKILL.md");
  writeFileSync(file, `---\n${frontmatter}\n---\n\n# ${name}\n\nSteps for ${name}.\n`);
  return file;
}

async function systemTextOfOneTurn(
  wire: WireProvider,
  configure: (config: Record<string, unknown>) => Record<string, unknown>,
  options: { promptMode?: "full" | "minimal"; beforeTurn?: (workspaceDir: string) => void } = {},
): Promise<{ system: string; workspaceDir: string }> {
  llm = await startFakeLlm();
  harness = await createHarness({ config: configure(wireConfig(wire, llm.baseUrlFor(wire))) });
  options.beforeTurn?.(harness.workspaceDir);
  llm.enqueue(reply("Done."));
  const context = await harness.context("agent:main:prompt");
  const result = await executeTurn(
    options.promptMode === undefined ? context : { ...context, promptMode: options.promptMode },
    { prompt: "What can you do?", timeoutMs: 30_000, entryPoint: "agent" },
  );
  expect(result.status).toBe("ok");
  expect(llm.requests).toHaveLength(1);
  return { system: systemTextOf(llm.requests[0]?.body), workspaceDir: harness.workspaceDir };
}

const withDefaults = (config: Record<string, unknown>, defaults: Record<string, unknown>) => {
  const agents = (config.agents ?? {}) as { defaults?: Record<string, unknown> };
  return { ...config, agents: { ...agents, defaults: { ...(agents.defaults ?? {}), ...defaults } } };
};

describe.each(["openai", "anthropic"] as const)(
  "the system prompt over the %s wire (tooling/fake-llm)",
  (wire) => {
    it("lists the workspace's skills by name, description and path, and leaves a gated one out", async () => {
      let deployFile = "";
      const { system } = await systemTextOfOneTurn(wire, (config) => config, {
        beforeTurn: (workspaceDir) => {
          deployFile = writeSkill(
            workspaceDir,
            "deploy",
            "name: deploy\ndescription: Ship the app to staging",
          );
          writeSkill(
            workspaceDir,
            "notion",
            'name: notion\ndescription: Search the team wiki\nmetadata: {"openclaw": {"requires": {"env": ["NOTION_KEY_FOR_PROMPT_TEST"]}}}',
          );
        },
      });
      expect(system).toContain("## Skills");
      expect(system).toContain("<available_skills>");
      expect(system).toContain("deploy");
      expect(system).toContain("Ship the app to staging");
      expect(system).toContain(deployFile);
      expect(system).not.toContain("Search the team wiki");
    });

    it("leaves the Skills section out when the config turns the only skill off", async () => {
      const { system } = await systemTextOfOneTurn(
        wire,
        (config) => ({ ...config, skills: { entries: { deploy: { enabled: false } } } }),
        {
          beforeTurn: (workspaceDir) =>
            writeSkill(workspaceDir, "deploy", "name: deploy\ndescription: Ship it"),
        },
      );
      expect(system).not.toContain("<available_skills>");
      expect(system).not.toContain("Ship it");
    });

    it("has the Memory Recall section only when memory search is enabled", async () => {
      const off = await systemTextOfOneTurn(wire, (config) => config);
      expect(off.system).toContain("## Tooling");
      expect(off.system).not.toContain("## Memory Recall");
      await harness?.close();
      await llm?.close();
      const on = await systemTextOfOneTurn(wire, (config) =>
        withDefaults(config, { memorySearch: { enabled: true } }),
      );
      expect(on.system).toContain("## Memory Recall");
      expect(on.system).toContain("memory_search");
    });

    it("lists configured model aliases, and says nothing of aliases without them", async () => {
      const without = await systemTextOfOneTurn(wire, (config) => config);
      expect(without.system).not.toContain("## Model Aliases");
      await harness?.close();
      await llm?.close();
      const withAlias = await systemTextOfOneTurn(wire, (config) => {
        const defaults = ((config.agents ?? {}) as { defaults?: { model?: { primary?: string } } }).defaults;
        const primary = defaults?.model?.primary ?? "";
        return withDefaults(config, { models: { [primary]: { alias: "house-model" } } });
      });
      expect(withAlias.system).toContain("## Model Aliases");
      expect(withAlias.system).toContain("house-model");
    });

    it("sends the minimal mode's smaller prompt: how to work, not the full set of sections", async () => {
      const full = await systemTextOfOneTurn(wire, (config) => config);
      await harness?.close();
      await llm?.close();
      const minimal = await systemTextOfOneTurn(wire, (config) => config, { promptMode: "minimal" });
      expect(full.system).toContain("## Execution Bias");
      expect(minimal.system).not.toContain("## Execution Bias");
      expect(minimal.system).toContain("## Safety");
      expect(minimal.system.length).toBeLessThan(full.system.length);
    });
  },
);
