// The `skills` section: which SKILL.md skills an agent may see (OpenClaw 2026.9.6's `skills` keys).
// Owns: the shape and defaults of the section. Does not own: discovering, gating or listing skills
// (turn-pipeline's skills module) nor where the managed folder is when not set (the state dir's `skills`).
import { z } from "zod";
import { SKILLS_DEFAULTS as D } from "./defaults.ts";
import { nonEmptyString, positiveInt } from "./schema-primitives.ts";

/** One skill's settings, by its key (the manifest's `skillKey`, else its name). */
const skillEntry = z.strictObject({
  enabled: z.boolean().optional().describe("false hides the skill whatever its requirements say."),
  env: z
    .record(nonEmptyString, z.string())
    .optional()
    .describe("Environment values that satisfy the skill's `requires.env` (not exported to tools)."),
  apiKey: nonEmptyString
    .optional()
    .describe('Satisfies the skill\'s `primaryEnv` requirement; use "${NAME}" for a secret.'),
});

export const skillsConfig = z.strictObject({
  allowBundled: z
    .array(nonEmptyString)
    .optional()
    .describe("Bundled skills allowed (by key or name); absent or empty: all of them."),
  load: z
    .strictObject({
      extraDirs: z
        .array(nonEmptyString)
        .default([])
        .describe("More skill folders, lowest precedence (below bundled); ~ is the home directory."),
      managedDir: nonEmptyString
        .optional()
        .describe("The managed skills folder; default <state dir>/skills (OpenClaw's ~/.openclaw/skills)."),
      bundledDir: nonEmptyString.optional().describe("The bundled skills folder; the kernel ships none."),
    })
    .prefault({}),
  entries: z.record(nonEmptyString, skillEntry).default({}),
  limits: z
    .strictObject({
      maxSkillsInPrompt: positiveInt.default(D.maxSkillsInPrompt),
      maxSkillsPromptChars: positiveInt.default(D.maxSkillsPromptChars),
      maxSkillFileBytes: positiveInt.default(D.maxSkillFileBytes),
      maxCandidatesPerRoot: positiveInt.default(D.maxCandidatesPerRoot),
      maxSkillsLoadedPerSource: positiveInt.default(D.maxSkillsLoadedPerSource),
    })
    .prefault({}),
});

/** The parsed `skills` section: which SKILL.md skills an agent may see, and the discovery and prompt limits. */
export type SkillsConfig = z.output<typeof skillsConfig>;
