// The kernel-built system prompt. Owns: the preamble sections (tooling, safety, workspace, runtime metadata),
// the minimal mode for subagents and the planner, reading the workspace bootstrap files with OpenClaw's rules
// (blank skipped, large trimmed head 75 % + tail 25 % around a marker, missing → a one-line marker) and the
// record that makes them a first-turn-only read (a `custom` transcript entry replayed on later turns, so the
// prompt stays the same for the whole session and across restarts). Does not own: how pi renders sections
// (the preamble is pi's `customPrompt`, the extra system prompt its `addendum`, bootstrap files its
// `project_context`) or which tools exist (the caller passes their names).
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

/** OpenClaw's bootstrap files, in injection order. */
export const BOOTSTRAP_FILE_NAMES = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md"] as const;
/** Minimal mode (subagents, planner) keeps only the files about how to work, not who to be. */
export const MINIMAL_BOOTSTRAP_FILE_NAMES = ["AGENTS.md", "TOOLS.md"] as const;
/** The transcript entry recording what the first turn injected (not part of the model context). */
export const BOOTSTRAP_ENTRY_TYPE = "agent-kernel.bootstrap";

const HEAD_RATIO = 0.75;
const TAIL_RATIO = 0.25;

/** One bootstrap file as injected: `content` is already trimmed or the missing-file marker. */
export interface BootstrapFile {
  readonly path: string;
  readonly content: string;
}

/** OpenClaw's trimming: head and tail kept around a marker naming the file and what was kept. */
export function trimBootstrapContent(
  content: string,
  fileName: string,
  maxChars: number,
): { content: string; truncated: boolean } {
  const trimmed = content.trimEnd();
  if (trimmed.length <= maxChars) return { content: trimmed, truncated: false };
  const marker = (head: number, tail: number) =>
    [
      "",
      `[...truncated, read ${fileName} for full content...]`,
      `…(truncated ${fileName}: kept ${head}+${tail} chars of ${trimmed.length})…`,
      "",
    ].join("\n");
  let head = 0;
  let tail = 0;
  // Two passes settle the marker's own length (its numbers grow with the kept counts).
  for (let pass = 0; pass < 3; pass++) {
    const budget = Math.max(0, maxChars - marker(head, tail).length - 2);
    head = Math.floor(budget * HEAD_RATIO);
    tail = Math.floor(budget * TAIL_RATIO);
  }
  const rendered = [trimmed.slice(0, head), marker(head, tail), tail > 0 ? trimmed.slice(-tail) : ""]
    .filter((part) => part.length > 0)
    .join("\n");
  return { content: rendered.slice(0, maxChars), truncated: true };
}

/**
 * Reads the bootstrap files of a workspace with the injection rules applied. Most workspaces lack most of
 * the files: a missing one is found with a synchronous `existsSync` (a stat, no exception built), and the
 * files that exist are read concurrently, so a first turn costs one file-system round trip, not five.
 */
export async function loadBootstrapFiles(
  workspaceDir: string,
  options: { maxChars: number; mode: "full" | "minimal" },
): Promise<BootstrapFile[]> {
  const names = options.mode === "minimal" ? MINIMAL_BOOTSTRAP_FILE_NAMES : BOOTSTRAP_FILE_NAMES;
  const contents = await Promise.all(
    names.map((name) => {
      const path = join(workspaceDir, name);
      return existsSync(path) ? readIfPresent(path) : undefined;
    }),
  );
  const files: BootstrapFile[] = [];
  names.forEach((name, index) => {
    const path = join(workspaceDir, name);
    const raw = contents[index];
    if (raw === undefined) {
      files.push({ path, content: `[MISSING] Expected at: ${path}` });
      return;
    }
    if (raw.trim() === "") return;
    files.push({ path, content: trimBootstrapContent(raw, name, options.maxChars).content });
  });
  return files;
}

/** The file's text; undefined when it vanished since it was seen. Other read errors propagate. */
async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** What the first turn recorded, or undefined when the branch has no record. */
export function recordedBootstrap(
  branch: readonly { readonly type: string; readonly customType?: string; readonly data?: unknown }[],
): BootstrapFile[] | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry?.type === "custom" && entry.customType === BOOTSTRAP_ENTRY_TYPE) {
      const files = (entry.data as { files?: unknown } | undefined)?.files;
      return Array.isArray(files) ? (files as BootstrapFile[]) : [];
    }
  }
  return undefined;
}

export interface KernelPromptInput {
  readonly mode: "full" | "minimal";
  readonly workspaceDir: string;
  /** The tools the model gets, in order. */
  readonly toolNames: readonly string[];
  readonly agentId: string;
  readonly provider: string;
  readonly model: string;
  readonly thinkingLevel: string;
  /** A sandboxed session: what its tools see (mount paths with their access) and whether it has network. */
  readonly sandbox?: { readonly mounts: readonly string[]; readonly network: boolean };
}

const TOOL_SUMMARIES: Readonly<Record<string, string>> = {
  read: "read a file of the workspace",
  write: "create or overwrite a file of the workspace",
  edit: "replace exact text in a file of the workspace",
  exec: "run a shell command in the workspace (time and output are capped)",
  message: "send a message to the user now, through the conversation's channel",
  sessions_list: "list this agent's sessions",
  sessions_history: "read the recent messages of one of this agent's sessions",
};

/** The preamble: the sections of the kernel's own prompt. Deterministic for the same input. */
export function buildKernelSystemPrompt(input: KernelPromptInput): string {
  const tools =
    input.toolNames.length === 0
      ? "No tools are available in this run; answer from the conversation."
      : input.toolNames
          .map((name) => `- ${name}: ${TOOL_SUMMARIES[name] ?? "see its description"}`)
          .join("\n");
  const sections = [
    input.mode === "minimal"
      ? "You are a sub-agent working on one task for another agent. Be brief and return only the result."
      : "You are a personal assistant running inside an agent gateway.",
    `## Tooling\n${tools}\nPaths are relative to the workspace; paths outside it are refused.`,
  ];
  if (input.mode === "full") {
    sections.push(
      "## Safety\nYou have no independent goals. Do not act beyond the user's request, do not try to gain access or resources, and ask before anything destructive or irreversible. Never reveal secrets or credentials.",
    );
  }
  if (input.sandbox !== undefined) {
    sections.push(
      `## Sandbox\nYour tools run in a sandbox. They see only ${input.sandbox.mounts.join(", ")}, the system's programs and a private /tmp; ${input.sandbox.network ? "the network is reachable" : "there is no network"}. Commands are limited in time, output, memory and processes.`,
    );
  }
  sections.push(
    `## Workspace\nYour working directory is ${input.workspaceDir}. The workspace files below (when present) describe how to work here.`,
    `## Runtime\nagent=${input.agentId} model=${input.provider}/${input.model} thinking=${input.thinkingLevel}`,
  );
  return sections.join("\n\n");
}
