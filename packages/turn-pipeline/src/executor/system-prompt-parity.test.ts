// The prompt, the skills catalog and the bootstrap budgets against OpenClaw 2026.9.6's answers
// (fixtures/openclaw/system-prompt/*.json, recorded by tooling/parity/record/system-prompt.mjs). The prompt is
// compared section by section: every difference is listed here (and in docs/parity.md) with its reason, and
// every other section must match OpenClaw's text exactly.
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatSkillsCatalog } from "../skills/index.ts";
import { loadBootstrapFiles } from "./bootstrap-files.ts";
import { buildKernelSystemPrompt } from "./system-prompt.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "openclaw", "system-prompt");
function cases<T>(name: string): T[] {
  return (JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")) as { cases: T[] }).cases;
}

/** The prompt as `## ` sections (the text before the first one under ""), OpenClaw's cache markers removed. */
function sections(prompt: string): Map<string, string[]> {
  const out = new Map<string, string[]>([["", []]]);
  let current = "";
  for (const line of prompt.split("\n")) {
    if (/^<!-- \/?OPENCLAW[-_A-Z]*BOUNDARY -->$/.test(line) || line === "") continue;
    if (line.startsWith("## ")) {
      current = line.slice(3);
      out.set(current, []);
    } else out.get(current)?.push(line);
  }
  return out;
}

/** Sections OpenClaw has and the kernel leaves out, and why (docs/parity.md). */
const OMITTED: Record<string, string> = {
  "Runtime Context": "the kernel sends no internal-context envelopes (<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>)",
  Documentation: "only with a docs URL: the kernel ships no docs folder the model could read",
  "Conversation Context": "the extra system prompt is pi's addendum section, after the preamble",
  "Subagent Context": "the extra system prompt is pi's addendum section, after the preamble",
};
/** OpenClaw's section name → the kernel's, for sections about the product itself. */
const RENAMED: Record<string, string> = { "OpenClaw Control": "Gateway Control" };
/** Lines of OpenClaw's sections the kernel leaves out, and why. */
const DROPPED_LINES: readonly [RegExp, string][] = [
  [
    /^\/approve is user command|^allow-once covers|^Approval preview:|^For task-authorized commands/,
    "no exec approvals in the kernel",
  ],
];
/** Lines of OpenClaw's the kernel says differently, and why. */
const REPLACED_LINES: Readonly<Record<string, string>> = {
  // No tools in the kernel means none at all: no backend exposes others.
  "The active runtime provides the available OpenClaw tools directly. Use only exposed tools; names are case-sensitive.":
    "No tools are available in this run; answer from the conversation.",
};
/** Sections whose text the kernel adapts (product names, its own tools); compared for presence only. */
const ADAPTED = new Set([
  "",
  "Safety",
  "Gateway Control",
  "Workspace",
  "Workspace Files (injected)",
  "Messaging",
  "Runtime",
]);

function expectSameSections(ours: string, theirs: string, label: string) {
  const mine = sections(ours);
  const openclaw = sections(theirs);
  for (const [name, lines] of openclaw) {
    if (name in OMITTED) {
      expect(mine.has(name), `${label}: ${name} left out (${OMITTED[name]})`).toBe(false);
      continue;
    }
    const ourName = RENAMED[name] ?? name;
    expect(mine.has(ourName), `${label}: section "${ourName}"`).toBe(true);
    if (ADAPTED.has(ourName)) continue;
    const kept = lines
      .filter((line) => !DROPPED_LINES.some(([pattern]) => pattern.test(line)))
      .map((line) => REPLACED_LINES[line] ?? line);
    expect(mine.get(ourName), `${label}: section "${ourName}"`).toEqual(kept);
  }
  const extra = [...mine.keys()].filter(
    (name) => !openclaw.has(name) && !Object.values(RENAMED).includes(name),
  );
  expect(extra, `${label}: sections OpenClaw does not have`).toEqual([]);
}

interface PromptCase {
  name: string;
  input: {
    mode: "full" | "minimal";
    toolNames: string[];
    skillsPrompt?: string;
    reactions?: { level: "minimal" | "extensive"; channel: string };
    ttsHint?: string;
  };
  prompt: string;
}

describe("the system prompt against OpenClaw's builder", () => {
  const recorded = cases<PromptCase>("prompts");
  it.each(recorded.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const ours = buildKernelSystemPrompt({
      mode: c.input.mode,
      workspaceDir: "/ws",
      toolNames: c.input.toolNames,
      agentId: "main",
      provider: "anthropic",
      model: "claude-test",
      thinkingLevel: "off",
      skillsPrompt: c.input.skillsPrompt,
      reactions: c.input.reactions,
      ttsHint: c.input.ttsHint,
      host: { os: "linux", arch: "x64", node: "v22.0.0" },
    });
    expectSameSections(ours, c.prompt, c.name);
    // The lines the kernel keeps of the adapted sections.
    const mine = sections(ours);
    const openclaw = sections(c.prompt);
    expect(mine.get("Runtime")?.[0]).toBe(openclaw.get("Runtime")?.[0]); // the model identity line
    expect(mine.get("Safety")?.slice(0, 6)).toEqual(openclaw.get("Safety")?.slice(0, 6));
    expect(mine.get("Workspace")?.slice(0, 2)).toEqual(openclaw.get("Workspace"));
  });
});

describe("the skills catalog against OpenClaw's prepareSkillsForPrompt", () => {
  type CatalogCase = {
    name: string;
    skills: { name: string; description: string; filePath: string }[];
    limits: { maxSkillsInPrompt?: number; maxSkillsPromptChars?: number };
    prompt: string;
    admitted: string[];
  };
  it.each(cases<CatalogCase>("catalog").map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const catalog = formatSkillsCatalog(c.skills, c.limits);
    // OpenClaw's audit hint names its own command.
    expect(catalog.prompt).toBe(c.prompt.replace("`openclaw skills check`", "`agent skills list`"));
    expect(catalog.skills.map((s) => s.name)).toEqual(c.admitted);
  });
});

describe("the bootstrap budgets against OpenClaw's buildBootstrapContextFiles", () => {
  type BootstrapCase = {
    name: string;
    maxChars: number;
    totalMaxChars: number | null;
    files: { name: string; content: string | null }[];
    injected: { path: string; content: string }[];
  };
  it.each(cases<BootstrapCase>("bootstrap").map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const workspace = await mkdtemp(join(tmpdir(), "bootstrap-parity-"));
    try {
      for (const file of c.files)
        if (file.content !== null) await writeFile(join(workspace, file.name), file.content);
      const ours = await loadBootstrapFiles(workspace, {
        maxChars: c.maxChars,
        mode: "full",
        totalMaxChars: c.totalMaxChars ?? undefined,
      });
      // OpenClaw was given only the case's files; the kernel always looks for all five (missing ones marked).
      const named = new Set(c.files.map((file) => file.name));
      const shown = ours
        .filter((file) => named.has(file.path.slice(workspace.length + 1)))
        .map((file) => ({
          path: file.path.replace(workspace, "/ws"),
          content: file.content.replaceAll(workspace, "/ws"),
        }));
      expect(shown).toEqual(c.injected);
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });
});
