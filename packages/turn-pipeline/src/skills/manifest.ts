// What one SKILL.md says about itself: its frontmatter read with OpenClaw 2026.9.6's rules. Owns: the name
// (frontmatter `name`, else the folder's name), the required description, the `metadata.openclaw` manifest
// (`requires.bins|anyBins|env|config`, `os`, `always`, `primaryEnv`, `skillKey`; `clawdbot` accepted as
// OpenClaw's legacy key) and the invocation flags (`disable-model-invocation`, `user-invocable`). Does not
// own: finding or reading the file (load.ts) nor deciding whether the skill is offered (eligibility.ts).
import { parseFrontmatter } from "@earendil-works/pi-coding-agent";

/** What a skill needs before it is offered: every bin, one of anyBins, every env, every truthy config path. */
export interface SkillRequirements {
  readonly bins: readonly string[];
  readonly anyBins: readonly string[];
  readonly env: readonly string[];
  readonly config: readonly string[];
}

/** The `metadata.openclaw` block of a SKILL.md, normalised. */
export interface SkillManifest {
  readonly always?: boolean;
  readonly skillKey?: string;
  readonly primaryEnv?: string;
  readonly os?: readonly string[];
  readonly requires?: SkillRequirements;
  readonly emoji?: string;
  readonly homepage?: string;
}

/** A parsed SKILL.md header. */
export interface SkillHeader {
  readonly name: string;
  readonly description: string;
  readonly manifest: SkillManifest | undefined;
  /** `disable-model-invocation: true`: loaded, but never listed in the prompt. */
  readonly disableModelInvocation: boolean;
  readonly userInvocable: boolean;
}

/** OpenClaw's manifest key, then its legacy one. */
const MANIFEST_KEYS = ["openclaw", "clawdbot"] as const;

/**
 * Parses a SKILL.md's frontmatter. Throws an Error naming what is wrong (bad YAML, an unterminated block, a
 * missing description) — the loader turns it into a diagnostic for that file.
 */
export function parseSkillHeader(content: string, folderName: string): SkillHeader {
  const normalized = content.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  if (/^---\n/.test(normalized) && !/\n---(\n|$)/.test(normalized.slice(4))) {
    throw new Error("invalid frontmatter: missing closing --- delimiter");
  }
  let frontmatter: Record<string, unknown>;
  try {
    frontmatter = parseFrontmatter(normalized).frontmatter;
  } catch (error) {
    throw new Error(`invalid frontmatter: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
  }
  const name = scalar(frontmatter.name)?.trim() || folderName.trim();
  const description = scalar(frontmatter.description)?.trim();
  if (!name) throw new Error("name is required");
  if (!description) throw new Error("description is required");
  return {
    name,
    description,
    manifest: manifestOf(frontmatter.metadata),
    disableModelInvocation: flag(frontmatter["disable-model-invocation"], false),
    userInvocable: flag(frontmatter["user-invocable"], true),
  };
}

function scalar(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** OpenClaw's parseFrontmatterBool: true/yes/on/1 and false/no/off/0, else the fallback. */
function flag(value: unknown, fallback: boolean): boolean {
  const text = scalar(value)?.trim().toLowerCase();
  if (text === undefined) return fallback;
  if (["true", "yes", "on", "1"].includes(text)) return true;
  if (["false", "no", "off", "0"].includes(text)) return false;
  return fallback;
}

/** The manifest: `metadata` as YAML (a mapping, the usual one-line JSON form included) or a JSON string. */
function manifestOf(metadata: unknown): SkillManifest | undefined {
  let parsed = metadata;
  if (typeof metadata === "string") {
    try {
      parsed = JSON.parse(metadata);
    } catch {
      return undefined;
    }
  }
  if (!isRecord(parsed)) return undefined;
  const block = MANIFEST_KEYS.map((key) => parsed[key]).find(isRecord);
  if (block === undefined) return undefined;
  const requires = isRecord(block.requires)
    ? {
        bins: stringList(block.requires.bins),
        anyBins: stringList(block.requires.anyBins),
        env: stringList(block.requires.env),
        config: stringList(block.requires.config),
      }
    : undefined;
  const os = stringList(block.os);
  const skillKey = typeof block.skillKey === "string" && block.skillKey.trim() ? block.skillKey : undefined;
  return {
    ...(typeof block.always === "boolean" ? { always: block.always } : {}),
    ...(skillKey === undefined ? {} : { skillKey }),
    ...(typeof block.primaryEnv === "string" ? { primaryEnv: block.primaryEnv } : {}),
    ...(os.length > 0 ? { os } : {}),
    ...(requires === undefined ? {} : { requires }),
    ...(typeof block.emoji === "string" ? { emoji: block.emoji } : {}),
    ...(typeof block.homepage === "string" ? { homepage: block.homepage } : {}),
  };
}

/** OpenClaw's normalizeStringList: an array of strings, or one comma-separated string; blanks dropped. */
function stringList(value: unknown): string[] {
  const items = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [];
  return items
    .filter((item): item is string => typeof item === "string")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
