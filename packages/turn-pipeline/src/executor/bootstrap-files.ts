// The workspace bootstrap files the prompt carries (AGENTS.md, SOUL.md, TOOLS.md, IDENTITY.md, USER.md). Owns:
// reading them with OpenClaw 2026.9.6's rules (blank skipped, missing → a one-line marker; over the per-file cap
// cut head 75 % + tail 25 % around a marker, AGENTS.md with its policy digest between; USER.md capped at 4000;
// all files together within the total budget, 60 000 by default) plus the kernel's own safety rules for them
// (the model may write the workspace: only regular files are read, a link only when it stays inside the
// workspace, and never more bytes than the cut keeps; anything else → a one-line `[SKIPPED]` marker) and the
// record that makes them a first-turn-only read (a `custom` transcript entry replayed on later turns, so the
// prompt stays the same for the whole session and across restarts). Does not own: how they are rendered (pi's
// `project_context` section) nor the rest of the prompt (system-prompt.ts).
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
/** OpenClaw's budgets: the total of all files, USER.md's own cap, the least a file is worth starting. */
export const DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS = 60_000;
/** USER.md alone never takes more than this (or the per-file cap when that is lower). */
export const USER_BOOTSTRAP_MAX_CHARS = 4_000;
const MIN_BOOTSTRAP_FILE_BUDGET_CHARS = 64;
const MIN_TRIMMED_CONTENT_CHARS = 16;
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

/** OpenClaw's trimming: head and tail kept around a marker naming the file and what was kept; AGENTS.md keeps a policy digest too. */
export function trimBootstrapContent(
  content: string,
  fileName: string,
  maxChars: number,
): { content: string; truncated: boolean } {
  const trimmed = content.trimEnd();
  if (trimmed.length <= maxChars) return { content: trimmed, truncated: false };
  if (fileName.toLowerCase() === "agents.md")
    return { content: trimAgentsContent(trimmed, maxChars), truncated: true };
  const full = (head: number, tail: number) =>
    [
      "",
      `[...truncated, read ${fileName} for full content...]`,
      `…(truncated ${fileName}: kept ${head}+${tail} chars of ${trimmed.length})…`,
      "",
    ].join("\n");
  const compact = (head: number, tail: number) => `[…truncated ${head}+${tail}/${trimmed.length}]`;
  const separators = (head: number, tail: number, marker: string) =>
    marker.includes("\n") ? Number(head > 0) + Number(tail > 0) : 0;
  const fullMarker = full(0, 0);
  const template =
    maxChars - fullMarker.length - separators(1, 1, fullMarker) >= MIN_TRIMMED_CONTENT_CHARS ? full : compact;
  let headChars = 0;
  let tailChars = 0;
  let marker = template(0, 0);
  for (let pass = 0; pass < 3; pass++) {
    const budget = Math.max(0, maxChars - marker.length - separators(headChars, tailChars, marker));
    const nextHead = Math.floor(budget * HEAD_RATIO);
    const nextTail = Math.floor(budget * TAIL_RATIO);
    const nextMarker = template(nextHead, nextTail);
    if (nextHead === headChars && nextTail === tailChars && nextMarker.length === marker.length) break;
    headChars = nextHead;
    tailChars = nextTail;
    marker = nextMarker;
  }
  let length = headChars + tailChars + marker.length + separators(headChars, tailChars, marker);
  while (length > maxChars && (tailChars > 0 || headChars > 0)) {
    const overflow = length - maxChars;
    if (tailChars > 0) tailChars = Math.max(0, tailChars - overflow);
    else headChars = Math.max(0, headChars - overflow);
    marker = template(headChars, tailChars);
    length = headChars + tailChars + marker.length + separators(headChars, tailChars, marker);
  }
  if (headChars === 0 && tailChars === 0 && trimmed.length > 0) {
    const single = template(1, 0);
    if (1 + single.length + separators(1, 0, single) <= maxChars) {
      headChars = 1;
      marker = single;
    }
  }
  const rendered = [
    sliceUtf16(trimmed, 0, headChars),
    marker,
    tailChars > 0 ? sliceUtf16(trimmed, -tailChars) : "",
  ]
    .filter((part) => part.length > 0)
    .join(marker.includes("\n") ? "\n" : "");
  return { content: truncateUtf16(rendered, maxChars), truncated: true };
}

// AGENTS.md over its cap keeps its head (45 %), its tail (15 %) and, between them, a digest of its policy lines
// (35 %: headings, list items and lines naming rules — must, never, secret, test, commit…; the strongest first).
const AGENTS_DIGEST_RATIO = 0.35;
const AGENTS_HEAD_RATIO = 0.45;
const AGENTS_TAIL_RATIO = 0.15;
const AGENTS_DIGEST_MAX_LINE_CHARS = 240;
const DIGEST_CANDIDATE =
  /\b(?:AGENTS\.md|scoped|required|must|never|do not|before subtree|read scoped|owner|security|secret|credential|test|validation|command|commit|push|github|pr)\b|(?:🔴|禁止|嚴禁|不得|絕不|絕對不|切勿|必須|務必|一律|紅線)/iu;
const DIGEST_HIGH_PRIORITY =
  /\b(?:AGENTS\.md|scoped|required|must|never|do not|before subtree|read scoped|security|secret|credential)\b|(?:🔴|禁止|嚴禁|不得|絕不|絕對不|切勿)/iu;

interface DigestCandidate {
  readonly text: string;
  readonly highPriority: boolean;
}

function agentsDigest(
  candidates: readonly DigestCandidate[],
  budget: number,
): { text: string; omitted: number } {
  if (budget <= 0) return { text: "", omitted: 0 };
  const selected = new Set<DigestCandidate>();
  let used = 0;
  const trySelect = (candidate: DigestCandidate) => {
    const separator = selected.size > 0 ? 1 : 0;
    if (used + separator + candidate.text.length > budget) return;
    selected.add(candidate);
    used += separator + candidate.text.length;
  };
  for (const candidate of candidates) if (candidate.highPriority) trySelect(candidate);
  for (const candidate of candidates) if (!selected.has(candidate)) trySelect(candidate);
  return {
    text: candidates
      .filter((candidate) => selected.has(candidate))
      .map((candidate) => candidate.text)
      .join("\n"),
    omitted: Math.max(0, candidates.length - selected.size),
  };
}

function trimAgentsContent(trimmed: string, maxChars: number): string {
  let headChars = Math.floor(maxChars * AGENTS_HEAD_RATIO);
  let tailChars = Math.floor(maxChars * AGENTS_TAIL_RATIO);
  let digestBudget = Math.floor(maxChars * AGENTS_DIGEST_RATIO);
  const candidates: DigestCandidate[] = [];
  if (digestBudget > 0) {
    let lastProse: string | null = null;
    for (const source of trimmed.split(/\r?\n/u)) {
      let line = source.trim().replace(/\s+/gu, " ");
      if (line.length > AGENTS_DIGEST_MAX_LINE_CHARS)
        line = `${truncateUtf16(line, AGENTS_DIGEST_MAX_LINE_CHARS - 1)}…`;
      if (line.length === 0) {
        lastProse = null;
        continue;
      }
      if (/^\s*(?:`{3,}|~{3,})/u.test(line)) lastProse = null;
      else if (/^(?:#{1,6}|\s*[-*+]|\s*\d+[.)])\s+\S/u.test(line) || DIGEST_CANDIDATE.test(line)) {
        candidates.push({
          text: lastProse === null ? line : `${lastProse}\n${line}`,
          highPriority: DIGEST_HIGH_PRIORITY.test(line),
        });
        lastProse = null;
      } else lastProse = line;
    }
  }
  let digest = agentsDigest(candidates, digestBudget);
  const render = () =>
    [
      sliceUtf16(trimmed, 0, headChars),
      "[...truncated, read AGENTS.md for full content...]",
      digest.text ? "[Policy digest from AGENTS.md]" : "",
      digest.text,
      digest.omitted > 0 ? `[...${digest.omitted} more policy lines omitted...]` : "",
      `…(truncated AGENTS.md: kept ${headChars}+policy ${digest.text.length}+${tailChars} chars of ${trimmed.length})…`,
      tailChars > 0 ? sliceUtf16(trimmed, -tailChars) : "",
    ]
      .filter((part) => part.length > 0)
      .join("\n");
  let rendered = render();
  while (rendered.length > maxChars && (tailChars > 0 || headChars > 1 || digestBudget > 0)) {
    const overflow = rendered.length - maxChars;
    if (tailChars > 0) tailChars = Math.max(0, tailChars - overflow);
    else if (headChars > 1) headChars = Math.max(1, headChars - overflow);
    else {
      digestBudget = Math.max(0, digestBudget - overflow);
      digest = agentsDigest(candidates, digestBudget);
    }
    rendered = render();
  }
  return truncateUtf16(rendered, maxChars);
}

/** A UTF-16 slice that never keeps half of a surrogate pair at its cut ends. */
function sliceUtf16(text: string, start: number, end?: number): string {
  let from = start < 0 ? Math.max(0, text.length + start) : start;
  let to = end === undefined ? text.length : Math.min(text.length, end);
  if (from > 0 && from < text.length && isLowSurrogate(text.charCodeAt(from))) from++;
  if (to > 0 && to < text.length && isHighSurrogate(text.charCodeAt(to - 1))) to--;
  return text.slice(from, Math.max(from, to));
}

function truncateUtf16(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : sliceUtf16(text, 0, maxChars);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** OpenClaw's clampToBudget: what is left of the total budget, with an ellipsis when cut. */
function clampToBudget(content: string, budget: number): string {
  if (budget <= 0) return "";
  if (content.length <= budget) return content;
  if (budget <= 3) return truncateUtf16(content, budget);
  return `${truncateUtf16(content, budget - 1)}…`;
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
  options: {
    maxChars: number;
    mode: "full" | "minimal";
    /** All files together (OpenClaw's `bootstrapTotalMaxChars`); default max(maxChars, 60 000). */
    totalMaxChars?: number | undefined;
  },
): Promise<BootstrapFile[]> {
  const names = options.mode === "minimal" ? MINIMAL_BOOTSTRAP_FILE_NAMES : BOOTSTRAP_FILE_NAMES;
  let workspaceRealPath: Promise<string> | undefined;
  const workspace = { dir: workspaceDir, realPath: () => (workspaceRealPath ??= realpath(workspaceDir)) };
  const reads = await Promise.all(names.map((name) => readBootstrapFile(workspace, name, options.maxChars)));
  const files: BootstrapFile[] = [];
  // OpenClaw's buildBootstrapContextFiles: each file takes what it injects from the total, in order.
  let remaining = Math.max(
    1,
    Math.floor(options.totalMaxChars ?? Math.max(options.maxChars, DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS)),
  );
  for (const [index, name] of names.entries()) {
    if (remaining <= 0) break;
    const path = join(workspaceDir, name);
    const read = reads[index] ?? MISSING;
    if (read.kind === "missing" || read.kind === "skipped") {
      const marker = clampToBudget(
        read.kind === "missing" ? `[MISSING] Expected at: ${path}` : `[SKIPPED] ${read.reason}: ${path}`,
        remaining,
      );
      if (marker === "") break;
      remaining = Math.max(0, remaining - marker.length);
      files.push({ path, content: marker });
      continue;
    }
    if (remaining < MIN_BOOTSTRAP_FILE_BUDGET_CHARS) break;
    const fileBudget =
      name === "USER.md" ? Math.min(options.maxChars, USER_BOOTSTRAP_MAX_CHARS) : options.maxChars;
    const fileMaxChars = Math.max(1, Math.min(fileBudget, remaining));
    let content: string;
    if (read.kind === "whole") {
      if (read.text.trim() === "") continue;
      content = trimBootstrapContent(read.text, name, fileMaxChars).content;
    } else {
      content = cutAround(read.head, read.tail.trimEnd(), `${read.bytes} bytes`, name, fileMaxChars);
    }
    content = clampToBudget(content, remaining);
    if (content === "") continue;
    remaining = Math.max(0, remaining - content.length);
    files.push({ path, content });
  }
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
