import { describe, expect, it } from "vitest";
import { SKILLS_DEFAULTS } from "./defaults.ts";
import { ConfigError } from "./errors.ts";
import { parseConfig } from "./load.ts";

describe("the skills section", () => {
  it("defaults to OpenClaw's limits, no entries and no extra folders", () => {
    const { skills, agents } = parseConfig({});
    expect(skills.limits).toEqual(SKILLS_DEFAULTS);
    expect(skills.limits.maxSkillsPromptChars).toBe(18_000);
    expect(skills.entries).toEqual({});
    expect(skills.load.extraDirs).toEqual([]);
    expect(skills.allowBundled).toBeUndefined();
    expect(agents.defaults.bootstrapTotalMaxChars).toBe(60_000);
  });

  it("takes per-skill entries, an allowlist and limits", () => {
    const { skills } = parseConfig({
      skills: {
        allowBundled: ["weather"],
        entries: { github: { enabled: false }, notion: { env: { NOTION_KEY: "x" }, apiKey: "k" } },
        limits: { maxSkillsInPrompt: 3 },
      },
    });
    expect(skills.entries.github?.enabled).toBe(false);
    expect(skills.entries.notion?.env).toEqual({ NOTION_KEY: "x" });
    expect(skills.limits.maxSkillsInPrompt).toBe(3);
    expect(skills.limits.maxSkillFileBytes).toBe(256_000);
  });

  it("names a wrong key and a wrong value", () => {
    expect(() => parseConfig({ skills: { entries: { github: { enable: false } } } })).toThrow(ConfigError);
    expect(() => parseConfig({ skills: { limits: { maxSkillsInPrompt: 0 } } })).toThrow(
      /skills\.limits\.maxSkillsInPrompt/,
    );
  });
});
