// Records the system-prompt fixtures (issue 22) from the real OpenClaw 2026.9.6 functions: the prompt builder
// (buildConfiguredAgentSystemPrompt without a config, i.e. buildAgentSystemPrompt) over the kernel's tool sets in
// full and minimal mode, with and without a skills catalog, a sandbox, reactions and a TTS hint; the skills catalog
// (prepareSkillsForPrompt) within and over its budget; and the bootstrap budgets (buildBootstrapContextFiles:
// per-file cap, USER.md's 4000, the total, AGENTS.md's policy digest).
//
// Run by hand (Node 24, the unpacked package; see ../README.md and runtime-resolver.mjs), from the repo root:
//   OPENCLAW_DIST=/tmp/oc-env/openclaw/package/dist NODE_PATH=/tmp/oc-env/deps/node_modules \
//   OPENCLAW_NODE_MODULES=/tmp/oc-env/deps/node_modules \
//   /tmp/oc-env/node24/package/bin/node tooling/parity/record/system-prompt.mjs
// Writes packages/turn-pipeline/fixtures/openclaw/system-prompt/{prompts,catalog,bootstrap}.json.
import fs from "node:fs";
import { registerHooks } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { get } from "../load-openclaw.mjs";

const depsDir = process.env.OPENCLAW_NODE_MODULES;
registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (/^(\.|\/|node:|file:)/.test(specifier)) throw error;
      return nextResolve(specifier, {
        ...context,
        parentURL: pathToFileURL(path.join(depsDir, "x.mjs")).href,
      });
    }
  },
});

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(here, "../../../packages/turn-pipeline/fixtures/openclaw/system-prompt");
fs.mkdirSync(out, { recursive: true });
const write = (name, cases) =>
  fs.writeFileSync(
    path.join(out, `${name}.json`),
    `${JSON.stringify({ source: "openclaw@2026.9.6", cases }, null, 2)}\n`,
  );

const buildPrompt = await get("buildConfiguredAgentSystemPrompt", "system-prompt-params");
const prepareSkills = await get("prepareSkillsForPrompt", "skill-prompt-limits");
const buildBootstrap = await get("buildBootstrapContextFiles", "bootstrap-");

const host = { os: "linux", arch: "x64", node: "v22.0.0" };
const allTools = [
  "read",
  "write",
  "edit",
  "apply_patch",
  "exec",
  "web_fetch",
  "message",
  "sessions_list",
  "sessions_history",
];
const skillsPrompt =
  "\n\nThe following skills provide specialized instructions for specific tasks.\nRead a skill's file at its listed location when the task matches its description.\n\n<available_skills>\n  <skill>\n    <name>weather</name>\n    <description>Look up the weather</description>\n    <location>/ws/skills/weather/SKILL.md</location>\n  </skill>\n</available_skills>";
const promptCases = [
  { name: "full, every kernel tool, skills", input: { mode: "full", toolNames: allTools, skillsPrompt } },
  { name: "full, no tools", input: { mode: "full", toolNames: [] } },
  { name: "full, read only, no skills", input: { mode: "full", toolNames: ["read"] } },
  {
    name: "minimal, every kernel tool, skills",
    input: { mode: "minimal", toolNames: allTools, skillsPrompt },
  },
  { name: "minimal, no tools", input: { mode: "minimal", toolNames: [] } },
  {
    name: "full, reactions and voice",
    input: {
      mode: "full",
      toolNames: ["read", "message"],
      reactions: { level: "minimal", channel: "telegram" },
      ttsHint: "Speak briefly.",
    },
  },
  { name: "full, skills without read", input: { mode: "full", toolNames: ["exec"], skillsPrompt } },
];
write(
  "prompts",
  promptCases.map(({ name, input }) => ({
    name,
    input,
    prompt: buildPrompt({
      workspaceDir: "/ws",
      toolNames: input.toolNames,
      promptMode: input.mode,
      ...(input.skillsPrompt ? { skillsPrompt: input.skillsPrompt } : {}),
      ...(input.reactions ? { reactionGuidance: input.reactions } : {}),
      ...(input.ttsHint ? { ttsHint: input.ttsHint } : {}),
      runtimeInfo: { agentId: "main", model: "anthropic/claude-test", ...host },
    }),
  })),
);

const skill = (i, description) => ({
  name: `skill-${String(i).padStart(2, "0")}`,
  description,
  filePath: `/s/${i}/SKILL.md`,
});
const catalogCases = [
  {
    name: "two skills, unsorted, escaped",
    skills: [skill(9, 'Last <one> & "quoted"'), skill(1, "First")],
    limits: {},
  },
  {
    name: "forty long skills in 8000 chars",
    skills: Array.from({ length: 40 }, (_, i) => skill(i, "A long description. ".repeat(20))),
    limits: { maxSkillsPromptChars: 8000 },
  },
  {
    name: "forty long skills in 1500 chars",
    skills: Array.from({ length: 40 }, (_, i) => skill(i, "A long description. ".repeat(20))),
    limits: { maxSkillsPromptChars: 1500 },
  },
  {
    name: "three skills, at most two",
    skills: [skill(3, "c"), skill(2, "b"), skill(1, "a")],
    limits: { maxSkillsInPrompt: 2 },
  },
];
write(
  "catalog",
  catalogCases.map(({ name, skills, limits }) => {
    const prepared = prepareSkills({ skills, ...limits });
    return { name, skills, limits, prompt: prepared.prompt, admitted: prepared.skills.map((s) => s.name) };
  }),
);

const policy = Array.from({ length: 400 }, (_, i) =>
  i % 7 === 0
    ? `- You must never push to main without review (${i}).`
    : `Some prose line number ${i} about the project.`,
).join("\n");
const files = (entries) =>
  entries.map(([name, content]) => ({ name, path: `/ws/${name}`, content, missing: content === null }));
const bootstrapCases = [
  {
    name: "all small",
    maxChars: 20000,
    totalMaxChars: undefined,
    files: [
      ["AGENTS.md", "# Agents\nBe kind."],
      ["SOUL.md", "Calm."],
      ["TOOLS.md", null],
      ["IDENTITY.md", null],
      ["USER.md", "Name: Ada"],
    ],
  },
  {
    name: "USER.md over 4000",
    maxChars: 20000,
    totalMaxChars: undefined,
    files: [
      ["AGENTS.md", "a"],
      ["USER.md", "u".repeat(9000)],
    ],
  },
  {
    name: "AGENTS.md policy digest",
    maxChars: 3000,
    totalMaxChars: undefined,
    files: [["AGENTS.md", policy]],
  },
  {
    name: "SOUL.md head and tail",
    maxChars: 500,
    totalMaxChars: undefined,
    files: [["SOUL.md", `${"s".repeat(300)}MIDDLE${"t".repeat(800)}`]],
  },
  {
    name: "total budget",
    maxChars: 20000,
    totalMaxChars: 1000,
    files: [
      ["AGENTS.md", "a".repeat(700)],
      ["SOUL.md", "s".repeat(700)],
      ["TOOLS.md", "t".repeat(700)],
    ],
  },
];
write(
  "bootstrap",
  bootstrapCases.map(({ name, maxChars, totalMaxChars, files: entries }) => ({
    name,
    maxChars,
    totalMaxChars: totalMaxChars ?? null,
    files: entries.map(([fileName, content]) => ({ name: fileName, content })),
    injected: buildBootstrap(files(entries), { maxChars, ...(totalMaxChars ? { totalMaxChars } : {}) }),
  })),
);
console.log(`wrote ${out}`);
