// The kernel-built system prompt. Owns: the preamble sections (tooling, safety, workspace, runtime metadata),
// the minimal mode for subagents and the planner, reading the workspace bootstrap files with OpenClaw's rules
// (blank skipped, large trimmed head 75 % + tail 25 % around a marker, missing → a one-line marker) plus the
// kernel's own safety rules for them (the model may write the workspace: only regular files are read, a link
// only when it stays inside the workspace, and never more bytes than the cut keeps; anything else → a one-line
// `[SKIPPED]` marker) and the record that makes them a first-turn-only read (a `custom` transcript entry
// replayed on later turns, so the prompt stays the same for the whole session and across restarts). Does not
// own: how pi renders sections (the preamble is pi's `customPrompt`, the extra system prompt its `addendum`,
// bootstrap files its `project_context`) or which tools exist (the caller passes their names).
import { constants, lstatSync, type Stats } from "node:fs";
import { type FileHandle, lstat, open, readlink, realpath } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import { StringDecoder } from "node:string_decoder";

/** OpenClaw's bootstrap files, in injection order. */
export const BOOTSTRAP_FILE_NAMES = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md"] as const;
/** Minimal mode (subagents, planner) keeps only the files about how to work, not who to be. */
export const MINIMAL_BOOTSTRAP_FILE_NAMES = ["AGENTS.md", "TOOLS.md"] as const;
/** The transcript entry recording what the first turn injected (not part of the model context). */
export const BOOTSTRAP_ENTRY_TYPE = "agent-kernel.bootstrap";

const HEAD_RATIO = 0.75;
const TAIL_RATIO = 0.25;
/** A UTF-8 character is at most 4 bytes: `maxChars` characters never need more than 4 × maxChars bytes. */
const MAX_UTF8_BYTES = 4;
/**
 * How a bootstrap file is opened: never through a final symbolic link (the model may have planted one),
 * never waiting on a FIFO or device (the type is checked on the open handle, before any read).
 * `O_NOFOLLOW` and `O_NONBLOCK` are absent on Windows, where the `lstat` before the open is the only guard.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** One bootstrap file as injected: `content` is already trimmed, the missing-file or the skipped-file marker. */
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
  return { content: cutAround(trimmed, trimmed, `${trimmed.length}`, fileName, maxChars), truncated: true };
}

/** The cut: the start of `head` and the end of `tail` around the marker, `total` naming the whole's size. */
function cutAround(head: string, tail: string, total: string, fileName: string, maxChars: number): string {
  const marker = (headChars: number, tailChars: number) =>
    [
      "",
      `[...truncated, read ${fileName} for full content...]`,
      `…(truncated ${fileName}: kept ${headChars}+${tailChars} chars of ${total})…`,
      "",
    ].join("\n");
  let headChars = 0;
  let tailChars = 0;
  // Two passes settle the marker's own length (its numbers grow with the kept counts).
  for (let pass = 0; pass < 3; pass++) {
    const budget = Math.max(0, maxChars - marker(headChars, tailChars).length - 2);
    headChars = Math.floor(budget * HEAD_RATIO);
    tailChars = Math.floor(budget * TAIL_RATIO);
  }
  const rendered = [
    head.slice(0, headChars),
    marker(headChars, tailChars),
    tailChars > 0 ? tail.slice(-tailChars) : "",
  ]
    .filter((part) => part.length > 0)
    .join("\n");
  return rendered.slice(0, maxChars);
}

/**
 * Reads the bootstrap files of a workspace with the injection rules applied. Most workspaces lack most of
 * the files: a missing one is found with a synchronous `lstat` (no exception built for a missing file), and
 * the files that exist are read concurrently, so a first turn costs one file-system round trip, not five.
 *
 * The model may have written the workspace (its tools, or a sandbox with the workspace mounted read-write),
 * and the files are read by the gateway's user, so each is read defensively: only a regular file, opened
 * without following a final link and without blocking, and at most the bytes the cut can keep (the head and
 * the tail of a larger file, never the whole). A link is followed only when its target's real path stays
 * inside the workspace's real path (the target is opened without following links too, and the opened file
 * is checked to be that one, so a swap in between fails closed). Anything else becomes a `[SKIPPED]` marker
 * naming why, in the shape of the `[MISSING]` one.
 */
export async function loadBootstrapFiles(
  workspaceDir: string,
  options: { maxChars: number; mode: "full" | "minimal" },
): Promise<BootstrapFile[]> {
  const names = options.mode === "minimal" ? MINIMAL_BOOTSTRAP_FILE_NAMES : BOOTSTRAP_FILE_NAMES;
  let workspaceRealPath: Promise<string> | undefined;
  const workspace = { dir: workspaceDir, realPath: () => (workspaceRealPath ??= realpath(workspaceDir)) };
  const reads = await Promise.all(names.map((name) => readBootstrapFile(workspace, name, options.maxChars)));
  const files: BootstrapFile[] = [];
  names.forEach((name, index) => {
    const path = join(workspaceDir, name);
    const read = reads[index] ?? MISSING;
    switch (read.kind) {
      case "missing":
        files.push({ path, content: `[MISSING] Expected at: ${path}` });
        return;
      case "skipped":
        files.push({ path, content: `[SKIPPED] ${read.reason}: ${path}` });
        return;
      case "whole":
        if (read.text.trim() === "") return;
        files.push({ path, content: trimBootstrapContent(read.text, name, options.maxChars).content });
        return;
      case "ends":
        files.push({
          path,
          content: cutAround(read.head, read.tail.trimEnd(), `${read.bytes} bytes`, name, options.maxChars),
        });
        return;
    }
  });
  return files;
}

/** What reading one bootstrap file found: `ends` when only its head and tail were read (it is larger). */
type BootstrapRead =
  | { readonly kind: "missing" }
  | { readonly kind: "skipped"; readonly reason: string }
  | { readonly kind: "whole"; readonly text: string }
  | { readonly kind: "ends"; readonly head: string; readonly tail: string; readonly bytes: number };

const MISSING: BootstrapRead = { kind: "missing" };
/** One reason for every refused link (outside, dangling, a loop): the marker is no oracle for host paths. */
const REFUSED_LINK: BootstrapRead = {
  kind: "skipped",
  reason: "Symbolic link not resolving to a file inside the workspace",
};

interface Workspace {
  readonly dir: string;
  /** The workspace's real path, resolved once per load and only when a link needs it. */
  readonly realPath: () => Promise<string>;
}

async function readBootstrapFile(
  workspace: Workspace,
  name: string,
  maxChars: number,
): Promise<BootstrapRead> {
  const path = join(workspace.dir, name);
  let seen: Stats | undefined;
  try {
    seen = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    seen = undefined; // as `existsSync` did: an unreadable path (a file for a directory, no permission) is missing
  }
  if (seen === undefined) return MISSING;
  if (seen.isSymbolicLink()) {
    let target: string;
    let root: string;
    try {
      [target, root] = await Promise.all([realpath(path), workspace.realPath()]);
    } catch {
      return REFUSED_LINK;
    }
    if (!isInside(root, target)) return REFUSED_LINK;
    return readRegularFile(target, maxChars, root);
  }
  if (!seen.isFile()) return notRegular(seen);
  return readRegularFile(path, maxChars);
}

/**
 * Opens `path` (no final link followed, no blocking), checks the handle is a regular file (and, for a link's
 * target, that it still lies inside `root`) and reads at most what the cut keeps.
 */
async function readRegularFile(path: string, maxChars: number, root?: string): Promise<BootstrapRead> {
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return MISSING; // vanished since it was seen
    if (code === "ELOOP" || code === "EMLINK") return REFUSED_LINK; // became a link since it was seen
    if (code === "ENXIO" || code === "EISDIR") return { kind: "skipped", reason: "Not a regular file" };
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return notRegular(stats);
    if (root !== undefined && !(await opensInside(handle, stats, path, root))) return REFUSED_LINK;
    return await readEnds(handle, stats.size, maxChars);
  } finally {
    await handle.close();
  }
}

/**
 * Whether the opened link target is the file inside the workspace (a directory on its path may have been
 * swapped for a link since `realpath`; `O_NOFOLLOW` guards only the last component). On Linux the handle's
 * own path says so exactly; elsewhere the path must still resolve to itself and name the opened file.
 */
async function opensInside(handle: FileHandle, stats: Stats, path: string, root: string): Promise<boolean> {
  try {
    return isInside(root, await readlink(`/proc/self/fd/${handle.fd}`));
  } catch {
    // no /proc: fall through to the portable check
  }
  try {
    const [again, now] = await Promise.all([realpath(path), lstat(path)]);
    return again === path && now.isFile() && now.dev === stats.dev && now.ino === stats.ino;
  } catch {
    return false;
  }
}

/** The text of a file of `size` bytes: whole when the cut could keep any of it, else only its head and tail. */
async function readEnds(handle: FileHandle, size: number, maxChars: number): Promise<BootstrapRead> {
  // Enough bytes for maxChars characters, plus one character so the head alone proves the cut.
  const window = (maxChars + 1) * MAX_UTF8_BYTES;
  if (size <= 2 * window) return { kind: "whole", text: (await readAt(handle, 0, size)).toString("utf8") };
  // The head drops a character cut at its end; the tail drops the continuation bytes of one cut at its start.
  const head = new StringDecoder("utf8").write(await readAt(handle, 0, window));
  const tailBytes = await readAt(handle, size - window, window);
  let start = 0;
  while (start < MAX_UTF8_BYTES - 1 && ((tailBytes[start] ?? 0) & 0xc0) === 0x80) start++;
  return { kind: "ends", head, tail: tailBytes.subarray(start).toString("utf8"), bytes: size };
}

/** Up to `length` bytes from `position` (fewer when the file ended sooner). */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

function notRegular(stats: Stats): BootstrapRead {
  const kind = stats.isDirectory()
    ? "directory"
    : stats.isFIFO()
      ? "FIFO"
      : stats.isSocket()
        ? "socket"
        : stats.isBlockDevice() || stats.isCharacterDevice()
          ? "device"
          : stats.isSymbolicLink()
            ? "symbolic link"
            : "special file";
  return { kind: "skipped", reason: `Not a regular file (${kind})` };
}

/** Whether `path` lies strictly inside `root` (both real paths). */
function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
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
