// The commands the READMEs show, taken from the READMEs themselves: every line of every ```sh (bash, shell,
// console or unmarked) block of README.md and apps/*/README.md, a trailing `# comment` removed, lines ending
// in `\` joined with the next. Owns reading them out; what each one is and how it is run is the test's
// checked list (readme-commands.test.ts).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One command as a README shows it. */
export interface ReadmeCommand {
  /** Repo-relative README path. */
  readonly readme: string;
  /** 1-based line of the command's first line. */
  readonly line: number;
  /** The command, without its trailing comment. */
  readonly command: string;
}

const SHELL_BLOCK = /^\s*```\s*(sh|bash|shell|console)?\s*$/;
const ANY_FENCE = /^\s*```/;

/** The READMEs whose commands must be run: the root one and each app's. */
export function readmePaths(repoRoot: string): string[] {
  const apps = readdirSync(join(repoRoot, "apps"))
    .sort()
    .map((app) => `apps/${app}/README.md`)
    .filter((path) => existsSync(join(repoRoot, path)));
  return ["README.md", ...apps];
}

/** Every shell command of one README, in order. */
export function readmeCommands(repoRoot: string, readme: string): ReadmeCommand[] {
  const lines = readFileSync(join(repoRoot, readme), "utf8").split("\n");
  const commands: ReadmeCommand[] = [];
  let inShell = false;
  let inOther = false;
  let pending: { line: number; text: string } | undefined;
  lines.forEach((raw, index) => {
    if (!inShell && !inOther && ANY_FENCE.test(raw)) {
      if (SHELL_BLOCK.test(raw)) inShell = true;
      else inOther = true;
      return;
    }
    if ((inShell || inOther) && /^\s*```\s*$/.test(raw)) {
      inShell = false;
      inOther = false;
      return;
    }
    if (!inShell) return;
    const text = stripComment(raw).trim();
    if (pending === undefined && (text === "" || text.startsWith("#"))) return;
    const joined = pending === undefined ? text : `${pending.text} ${text}`;
    const line = pending?.line ?? index + 1;
    if (joined.endsWith("\\")) {
      pending = { line, text: joined.slice(0, -1).trim() };
      return;
    }
    pending = undefined;
    commands.push({ readme, line, command: joined });
  });
  return commands;
}

/** The line without a trailing `# comment` (a `#` after whitespace, outside quotes). */
export function stripComment(line: string): string {
  let quote: string | undefined;
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === "#" && (index === 0 || /\s/.test(line[index - 1] ?? ""))) return line.slice(0, index);
  }
  return line;
}
