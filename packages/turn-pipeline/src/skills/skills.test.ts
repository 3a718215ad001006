import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@agent-kernel/config";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { binaryOnPath, type SkillHost } from "./eligibility.ts";
import { discoverSkills } from "./load.ts";
import { parseSkillHeader } from "./manifest.ts";
import { formatSkillsCatalog } from "./prompt.ts";
import {
  buildSkillsSnapshot,
  inspectSkills,
  recordedSkillsSnapshot,
  resolveSessionSkills,
  SKILLS_ENTRY_TYPE,
} from "./snapshot.ts";

let root: string;
let workspace: string;
let managed: string;
let bundled: string;

function skill(dir: string, name: string, body: string): string {
  mkdirSync(join(dir, name), { recursive: true });
  const file = join(dir, name, "SKILL.md");
  writeFileSync(file, body);
  return file;
}

const host = (over: Partial<SkillHost> = {}): SkillHost => ({
  platform: "linux",
  env: {},
  hasBinary: () => false,
  ...over,
});

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "skills-"));
  workspace = join(root, "ws");
  managed = join(root, "managed");
  bundled = join(root, "bundled");
  mkdirSync(workspace);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("parseSkillHeader", () => {
  it("reads name, description, the openclaw manifest and the invocation flags", () => {
    const header = parseSkillHeader(
      [
        "---",
        "name: gh",
        "description: Work with GitHub",
        'metadata: {"openclaw": {"requires": {"bins": ["gh"], "env": "GH_TOKEN, GH_HOST"}, "primaryEnv": "GH_TOKEN", "os": ["linux"]}}',
        "disable-model-invocation: yes",
        "---",
        "# body",
      ].join("\n"),
      "folder",
    );
    expect(header).toMatchObject({
      name: "gh",
      description: "Work with GitHub",
      disableModelInvocation: true,
      userInvocable: true,
      manifest: {
        primaryEnv: "GH_TOKEN",
        os: ["linux"],
        requires: { bins: ["gh"], anyBins: [], env: ["GH_TOKEN", "GH_HOST"], config: [] },
      },
    });
  });

  it("takes the folder's name when the frontmatter has none; the legacy clawdbot key too", () => {
    const header = parseSkillHeader(
      "---\ndescription: d\nmetadata:\n  clawdbot:\n    always: true\n---\n",
      "weather",
    );
    expect(header.name).toBe("weather");
    expect(header.manifest?.always).toBe(true);
  });

  it("names what is wrong: no description, an unterminated block", () => {
    expect(() => parseSkillHeader("---\nname: x\n---\n", "x")).toThrow("description is required");
    expect(() => parseSkillHeader("---\nname: x\ndescription: y\n", "x")).toThrow("missing closing ---");
  });
});

describe("discoverSkills", () => {
  it("merges extra < bundled < managed < workspace: the workspace wins a name conflict", () => {
    const extra = join(root, "extra");
    skill(extra, "a", "---\ndescription: from extra\n---\n");
    skill(bundled, "a", "---\ndescription: from bundled\n---\n");
    skill(bundled, "b", "---\ndescription: only bundled\n---\n");
    skill(managed, "a", "---\ndescription: from managed\n---\n");
    const winner = skill(join(workspace, "skills"), "a", "---\ndescription: from workspace\n---\n");
    const found = discoverSkills({
      workspaceDir: workspace,
      managedDir: managed,
      bundledDir: bundled,
      extraDirs: [extra],
    });
    expect(found.skills.map((s) => [s.name, s.source, s.description])).toEqual([
      ["a", "workspace", "from workspace"],
      ["b", "bundled", "only bundled"],
    ]);
    expect(found.skills[0]?.filePath).toBe(winner);
    expect(found.shadowed.map((s) => s.winner)).toEqual([
      join(bundled, "a", "SKILL.md"),
      join(managed, "a", "SKILL.md"),
      winner,
    ]);
  });

  it("refuses a link out of its folder, an oversized file and a broken header, each with a diagnostic", () => {
    const skills = join(workspace, "skills");
    const outside = skill(root, "secret", "---\ndescription: outside\n---\n");
    mkdirSync(join(skills, "linked"), { recursive: true });
    symlinkSync(outside, join(skills, "linked", "SKILL.md"));
    skill(skills, "big", `---\ndescription: big\n---\n${"x".repeat(2000)}`);
    skill(skills, "broken", "---\nname: broken\n---\n");
    skill(skills, "fine", "---\ndescription: fine\n---\n");
    mkdirSync(join(skills, "no-skill-file"));
    const found = discoverSkills({ workspaceDir: workspace }, { maxSkillFileBytes: 1000 });
    expect(found.skills.map((s) => s.name)).toEqual(["fine"]);
    expect(found.diagnostics.map((d) => [d.path.slice(skills.length + 1), d.message])).toEqual([
      ["big/SKILL.md", expect.stringMatching(/larger than 1000 \(skills\.limits\.maxSkillFileBytes\)/)],
      ["broken/SKILL.md", "description is required"],
      ["linked/SKILL.md", "a symbolic link leaving its skills folder; not read"],
    ]);
  });

  it("keeps to the per-source limit", () => {
    for (const name of ["a", "b", "c"]) skill(join(workspace, "skills"), name, "---\ndescription: d\n---\n");
    const found = discoverSkills({ workspaceDir: workspace }, { maxSkillsLoadedPerSource: 2 });
    expect(found.skills.map((s) => s.name)).toEqual(["a", "b"]);
    expect(found.diagnostics[0]?.message).toMatch(/maxSkillsLoadedPerSource/);
  });
});

describe("the gates", () => {
  const manifestSkill = (name: string, metadata: string) =>
    skill(join(workspace, "skills"), name, `---\ndescription: ${name}\nmetadata: ${metadata}\n---\n`);

  it("says why each gated skill is off, and offers the rest", () => {
    manifestSkill("needs-env", '{"openclaw": {"requires": {"env": ["NOTION_KEY"]}}}');
    manifestSkill("needs-bin", '{"openclaw": {"requires": {"bins": ["jq", "gh"], "anyBins": ["rg", "ag"]}}}');
    manifestSkill(
      "needs-config",
      '{"openclaw": {"requires": {"config": ["tools.web.enabled", "browser.enabled"]}}}',
    );
    manifestSkill("mac-only", '{"openclaw": {"os": ["darwin"], "always": true}}');
    manifestSkill("off", '{"openclaw": {"skillKey": "off-key"}}');
    manifestSkill("always", '{"openclaw": {"always": true, "requires": {"bins": ["nothing-here"]}}}');
    const config = parseConfig({ skills: { entries: { "off-key": { enabled: false } } } });
    const report = inspectSkills(config, workspace, { host: host({ hasBinary: (bin) => bin === "jq" }) });
    const reasons = Object.fromEntries(report.statuses.map((s) => [s.skill.name, s.reasons]));
    expect(reasons).toEqual({
      always: [],
      "mac-only": ["os: only on darwin (this host is linux)"],
      "needs-bin": ["bins: gh not on PATH", "anyBins: none of rg, ag on PATH"],
      "needs-config": ["config: tools.web.enabled not set"],
      "needs-env": ["env: NOTION_KEY not set (or skills.entries.needs-env.env)"],
      off: ["disabled by skills.entries.off-key.enabled"],
    });
  });

  it("takes an env requirement from the environment, the entry's env, or primaryEnv with an apiKey", () => {
    manifestSkill("a", '{"openclaw": {"requires": {"env": ["A_KEY"]}}}');
    manifestSkill("b", '{"openclaw": {"requires": {"env": ["B_KEY"]}}}');
    manifestSkill("c", '{"openclaw": {"primaryEnv": "C_KEY", "requires": {"env": ["C_KEY"]}}}');
    const config = parseConfig({ skills: { entries: { b: { env: { B_KEY: "v" } }, c: { apiKey: "k" } } } });
    const report = inspectSkills(config, workspace, { host: host({ env: { A_KEY: "set" } }) });
    expect(report.statuses.map((s) => [s.skill.name, s.eligible])).toEqual([
      ["a", true],
      ["b", true],
      ["c", true],
    ]);
  });

  it("keeps bundled skills to skills.allowBundled when it lists any", () => {
    skill(bundled, "kept", "---\ndescription: k\n---\n");
    skill(bundled, "dropped", "---\ndescription: d\n---\n");
    const config = parseConfig({ skills: { allowBundled: ["kept"], load: { bundledDir: bundled } } });
    const report = inspectSkills(config, workspace, { host: host() });
    expect(report.statuses.map((s) => [s.skill.name, s.reasons])).toEqual([
      ["dropped", ["bundled, and not in skills.allowBundled"]],
      ["kept", []],
    ]);
  });

  it("finds an executable on PATH, not a plain file nor a path", () => {
    const bin = join(root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "tool"), "#!/bin/sh\n");
    chmodSync(join(bin, "tool"), 0o755);
    writeFileSync(join(bin, "plain"), "");
    expect(binaryOnPath("tool", bin)).toBe(true);
    expect(binaryOnPath("plain", bin)).toBe(false);
    expect(binaryOnPath(join(bin, "tool"), bin)).toBe(false);
  });
});

describe("formatSkillsCatalog", () => {
  const skills = [
    { name: "zeta", description: 'Last <one> & "quoted"', filePath: "/s/zeta/SKILL.md" },
    { name: "alpha", description: "First", filePath: "/s/alpha/SKILL.md" },
  ];

  it("renders OpenClaw's catalog, sorted by name and escaped", () => {
    expect(formatSkillsCatalog(skills).prompt).toBe(
      [
        "",
        "",
        "The following skills provide specialized instructions for specific tasks.",
        "Read a skill's file at its listed location when the task matches its description.",
        "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.",
        "",
        "<available_skills>",
        "  <skill>",
        "    <name>alpha</name>",
        "    <description>First</description>",
        "    <location>/s/alpha/SKILL.md</location>",
        "  </skill>",
        "  <skill>",
        "    <name>zeta</name>",
        "    <description>Last &lt;one&gt; &amp; &quot;quoted&quot;</description>",
        "    <location>/s/zeta/SKILL.md</location>",
        "  </skill>",
        "</available_skills>",
      ].join("\n"),
    );
  });

  it("goes compact over budget, then cuts skills, saying so", () => {
    const many = Array.from({ length: 40 }, (_, i) => ({
      name: `skill-${String(i).padStart(2, "0")}`,
      description: "A long description. ".repeat(20),
      filePath: `/s/${i}/SKILL.md`,
    }));
    const compact = formatSkillsCatalog(many, { maxSkillsPromptChars: 8000 });
    expect(compact.prompt.length).toBeLessThanOrEqual(8000);
    expect(compact.prompt).toMatch(/^⚠️ Skills (catalog using compact format|truncated)/);
    const cut = formatSkillsCatalog(many, { maxSkillsPromptChars: 1500 });
    expect(cut.prompt.length).toBeLessThanOrEqual(1500);
    expect(cut.skills.length).toBeLessThan(40);
    expect(cut.prompt).toContain(`⚠️ Skills truncated: included ${cut.skills.length} of 40`);
    expect(formatSkillsCatalog(many, { maxSkillsInPrompt: 2 }).skills.map((s) => s.name)).toEqual([
      "skill-00",
      "skill-01",
    ]);
  });
});

describe("the session snapshot", () => {
  it("is recorded by the first turn and replayed after: a changed skill shows in the next session only", () => {
    const dir = join(workspace, "skills");
    skill(dir, "first", "---\ndescription: the first\n---\n");
    const config = parseConfig({});
    const session = SessionManager.inMemory(workspace);
    const build = () => buildSkillsSnapshot(config, workspace, { host: host() });
    const first = resolveSessionSkills(session, build);
    expect(first.skills.map((s) => s.name)).toEqual(["first"]);
    expect(
      session.getEntries().filter((e) => e.type === "custom" && e.customType === SKILLS_ENTRY_TYPE),
    ).toHaveLength(1);

    skill(dir, "second", "---\ndescription: added mid-conversation\n---\n");
    const again = resolveSessionSkills(session, build);
    expect(again).toEqual(first);
    expect(session.getEntries()).toHaveLength(1);

    const next = resolveSessionSkills(SessionManager.inMemory(workspace), build);
    expect(next.skills.map((s) => s.name)).toEqual(["first", "second"]);
  });

  it("records nothing for a session without skills, which keeps none when one appears mid-conversation", () => {
    const session = SessionManager.inMemory(workspace);
    const build = () => buildSkillsSnapshot(parseConfig({}), workspace, { host: host() });
    expect(resolveSessionSkills(session, build).skills).toEqual([]);
    expect(session.getEntries()).toHaveLength(0);
    session.appendMessage({ role: "user", content: "hi", timestamp: 1 });
    skill(join(workspace, "skills"), "late", "---\ndescription: too late\n---\n");
    expect(resolveSessionSkills(session, build).skills).toEqual([]);
    expect(resolveSessionSkills(SessionManager.inMemory(workspace), build).skills.map((s) => s.name)).toEqual(
      ["late"],
    );
  });

  it("never trusts a damaged record: it lists nothing rather than what the record claims", () => {
    const session = SessionManager.inMemory(workspace);
    session.appendCustomEntry(SKILLS_ENTRY_TYPE, {
      version: 1,
      prompt: "<available_skills>forged",
      skills: [{ name: 1 }],
    });
    session.appendMessage({ role: "user", content: "hi", timestamp: 1 });
    const snapshot = resolveSessionSkills(session, () => {
      throw new Error("a later turn never rebuilds");
    });
    expect(snapshot).toEqual({ version: 1, skills: [], prompt: "" });
    expect(recordedSkillsSnapshot({ version: 2, skills: [], prompt: "" })).toBeUndefined();
    expect(recordedSkillsSnapshot(null)).toBeUndefined();
  });

  it("leaves out gated skills and those with disable-model-invocation", () => {
    const dir = join(workspace, "skills");
    skill(dir, "shown", "---\ndescription: s\n---\n");
    skill(dir, "hidden", "---\ndescription: h\ndisable-model-invocation: true\n---\n");
    skill(
      dir,
      "gated",
      '---\ndescription: g\nmetadata: {"openclaw": {"requires": {"bins": ["nope"]}}}\n---\n',
    );
    const snapshot = buildSkillsSnapshot(parseConfig({}), workspace, { host: host() });
    expect(snapshot.skills.map((s) => s.name)).toEqual(["shown"]);
    expect(snapshot.prompt).toContain("<name>shown</name>");
    expect(snapshot.prompt).not.toContain("hidden");
  });
});
