// The skills catalog the model sees, OpenClaw 2026.9.6's text and budget (skill-contract.ts and
// skill-prompt-limits.ts): `<available_skills>` with each skill's name, description and SKILL.md location,
// sorted by name, at most `maxSkillsInPrompt` skills in `maxSkillsPromptChars` characters — over budget it
// switches to the compact form (descriptions shortened, then dropped, then skills cut) with a note saying so.
// Owns: the catalog text. Does not own: the prompt's `## Skills` heading and instructions (system-prompt.ts).
import { SKILLS_DEFAULTS } from "@agent-kernel/config";

/** What the catalog lists of a skill. */
export interface CatalogSkill {
  readonly name: string;
  readonly description: string;
  readonly filePath: string;
}

type CatalogFormat =
  | { readonly kind: "full" }
  | { readonly kind: "compact"; readonly descriptionMaxChars: number };

const COMPACT_DESCRIPTION_MIN_CHARS = 4;
const COMPACT_DESCRIPTION_MAX_CHARS = 220;

function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/** Cuts at a UTF-16 boundary (never half a surrogate pair). */
function truncateUtf16(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

function shortDescription(description: string, maxChars: number): string {
  const normalized = description.replace(/\s+/g, " ").trim();
  if (normalized.length <= maxChars) return normalized;
  if (maxChars <= 3) return truncateUtf16(normalized, maxChars);
  return `${truncateUtf16(normalized, maxChars - 3).trimEnd()}...`;
}

function catalog(skills: readonly CatalogSkill[], format: CatalogFormat): string {
  if (skills.length === 0) return "";
  const instructions =
    format.kind === "full"
      ? "Read a skill's file at its listed location when the task matches its description."
      : format.descriptionMaxChars > 0
        ? "Read a skill's file at its listed location when the task matches its name or description."
        : "Read a skill's file at its listed location when the task matches its name.";
  const lines = [
    "\n\nThe following skills provide specialized instructions for specific tasks.",
    instructions,
    "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.",
    "",
    "<available_skills>",
  ];
  for (const skill of skills) {
    lines.push("  <skill>", `    <name>${escapeXml(skill.name)}</name>`);
    const description =
      format.kind === "full"
        ? skill.description
        : format.descriptionMaxChars > 0
          ? shortDescription(skill.description, format.descriptionMaxChars) || undefined
          : undefined;
    if (description !== undefined) lines.push(`    <description>${escapeXml(description)}</description>`);
    lines.push(`    <location>${escapeXml(skill.filePath)}</location>`, "  </skill>");
  }
  lines.push("</available_skills>");
  return lines.join("\n");
}

function limitNote(included: number, total: number, format: CatalogFormat): string {
  const compact =
    format.kind === "compact"
      ? format.descriptionMaxChars > 0
        ? "descriptions shortened"
        : "descriptions omitted"
      : undefined;
  if (included < total) {
    return `⚠️ Skills truncated: included ${included} of ${total}${compact ? ` (compact format, ${compact})` : ""}. Run \`agent skills list\` to audit.`;
  }
  return compact
    ? `⚠️ Skills catalog using compact format (${compact}). Run \`agent skills list\` to audit.`
    : "";
}

/** The rendered catalog and the skills it admitted (the ones the model can read). */
export interface SkillsCatalog {
  readonly prompt: string;
  readonly skills: readonly CatalogSkill[];
}

/** OpenClaw's prepareSkillsForPrompt: the full catalog when it fits, else the largest compact one that does. */
export function formatSkillsCatalog(
  skills: readonly CatalogSkill[],
  limits: { readonly maxSkillsInPrompt?: number; readonly maxSkillsPromptChars?: number } = {},
): SkillsCatalog {
  const maxSkills = limits.maxSkillsInPrompt ?? SKILLS_DEFAULTS.maxSkillsInPrompt;
  const maxChars = limits.maxSkillsPromptChars ?? SKILLS_DEFAULTS.maxSkillsPromptChars;
  const ordered = [...skills].sort((a, b) => a.name.localeCompare(b.name, "en"));
  const total = ordered.length;
  const byCount = ordered.slice(0, Math.max(0, maxSkills));
  const render = (list: readonly CatalogSkill[], format: CatalogFormat, withNote = true) => {
    const prompt = [withNote ? limitNote(list.length, total, format) : "", catalog(list, format)]
      .filter(Boolean)
      .join("\n");
    return prompt.length <= maxChars ? prompt : undefined;
  };
  const fitsCompact = (list: readonly CatalogSkill[], descriptionMaxChars: number, withNote = true) =>
    render(list, { kind: "compact", descriptionMaxChars }, withNote) !== undefined;
  const largestFitting = (list: readonly CatalogSkill[], withNote: boolean) => {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fitsCompact(list.slice(0, mid), 0, withNote)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };

  const full = render(byCount, { kind: "full" });
  if (full !== undefined) return { prompt: full, skills: byCount };
  let admitted = byCount;
  if (!fitsCompact(admitted, 0)) admitted = admitted.slice(0, largestFitting(admitted, true));
  if (admitted.length === 0 && byCount.length > 0) {
    const fullWithoutNote = render(byCount, { kind: "full" }, false);
    if (fullWithoutNote !== undefined) return { prompt: fullWithoutNote, skills: byCount };
    const count = largestFitting(byCount, false);
    if (count > 0) admitted = byCount.slice(0, count);
  }
  const withNote = fitsCompact(admitted, 0);
  let descriptionMaxChars = 0;
  if (admitted.length > 0 && fitsCompact(admitted, COMPACT_DESCRIPTION_MIN_CHARS, withNote)) {
    let lo = COMPACT_DESCRIPTION_MIN_CHARS;
    let hi = COMPACT_DESCRIPTION_MAX_CHARS;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fitsCompact(admitted, mid, withNote)) lo = mid;
      else hi = mid - 1;
    }
    descriptionMaxChars = lo;
  }
  const prompt = render(admitted, { kind: "compact", descriptionMaxChars }, withNote) ?? "";
  return { prompt, skills: prompt ? admitted : [] };
}

/**
 * The catalog with some skills' `<location>`s moved: `moves` maps a SKILL.md's listed path to where the model's
 * tools see it (a sandbox mounts skill folders elsewhere). Everything else of the text is kept as it was.
 */
export function relocateSkillsCatalog(prompt: string, moves: ReadonlyMap<string, string>): string {
  let relocated = prompt;
  for (const [from, to] of moves) {
    relocated = relocated
      .split(`<location>${escapeXml(from)}</location>`)
      .join(`<location>${escapeXml(to)}</location>`);
  }
  return relocated;
}
