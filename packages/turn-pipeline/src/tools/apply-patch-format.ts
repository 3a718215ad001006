// The OpenAI/Codex patch format of `apply_patch`, as text: parsing `*** Begin Patch` … `*** End Patch` into
// Add / Delete / Update (with an optional Move) operations, and applying an Update's `@@` chunks to a file's
// text the way Codex does (each chunk found after the previous one: its `@@` context line first, then its old
// lines — exactly, then ignoring trailing whitespace, then ignoring surrounding whitespace, then with Unicode
// dashes, quotes and spaces read as ASCII; an `*** End of File` chunk matched at the end). Owns no file
// access: what the operations touch and when is apply-patch.ts's.

/** A file to create with the given text. */
export interface AddFileOperation {
  readonly kind: "add";
  readonly path: string;
  readonly content: string;
}

/** A file to delete. */
export interface DeleteFileOperation {
  readonly kind: "delete";
  readonly path: string;
}

/** One `@@` chunk of an update. */
export interface UpdateChunk {
  /** The `@@ <line>` anchor, searched for before the old lines. */
  readonly context?: string | undefined;
  readonly oldLines: readonly string[];
  readonly newLines: readonly string[];
  /** Marked `*** End of File`: the old lines are at the end of the file. */
  readonly endOfFile: boolean;
}

/** A file to change by chunks, and maybe to move. */
export interface UpdateFileOperation {
  readonly kind: "update";
  readonly path: string;
  readonly moveTo?: string | undefined;
  readonly chunks: readonly UpdateChunk[];
}

/** One operation of a patch. */
export type PatchOperation = AddFileOperation | DeleteFileOperation | UpdateFileOperation;

/** A patch that cannot be parsed or applied; the message says where and why. */
export class PatchError extends Error {
  override readonly name = "PatchError";
}

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const END_OF_FILE = "*** End of File";

/** The patch's lines without a heredoc wrapper a model may have copied from a shell example. */
function patchLines(input: string): string[] {
  let lines = input.replace(/\r\n/g, "\n").trim().split("\n");
  const first = lines[0]?.trim() ?? "";
  if (/^(apply_patch\s+)?<<-?\s*['"]?\w+['"]?$/.test(first) && lines.length >= 2) {
    lines = lines.slice(1, /^['"]?\w+['"]?$/.test(lines.at(-1)?.trim() ?? "") ? -1 : undefined);
  }
  return lines;
}

/**
 * The operations of a patch, or a `PatchError` naming the line that is wrong. The first `@@` of an update
 * may be left out (Codex accepts that); a blank line inside a chunk is an empty context line.
 */
export function parsePatch(input: string): PatchOperation[] {
  const lines = patchLines(input);
  if ((lines[0]?.trim() ?? "") !== BEGIN) {
    throw new PatchError(`the first line of the patch must be "${BEGIN}"`);
  }
  if ((lines.at(-1)?.trim() ?? "") !== END) {
    throw new PatchError(`the last line of the patch must be "${END}"`);
  }
  const body = lines.slice(1, -1);
  const operations: PatchOperation[] = [];
  let index = 0;
  const lineNumber = () => index + 2;
  while (index < body.length) {
    const line = body[index] ?? "";
    const header = line.trim();
    if (header === "") {
      index++;
      continue;
    }
    if (header.startsWith(ADD)) {
      const path = header.slice(ADD.length).trim();
      index++;
      const content: string[] = [];
      while (index < body.length && (body[index] ?? "").startsWith("+")) {
        content.push((body[index] ?? "").slice(1));
        index++;
      }
      operations.push({ kind: "add", path, content: content.length > 0 ? `${content.join("\n")}\n` : "" });
      continue;
    }
    if (header.startsWith(DELETE)) {
      operations.push({ kind: "delete", path: header.slice(DELETE.length).trim() });
      index++;
      continue;
    }
    if (header.startsWith(UPDATE)) {
      const path = header.slice(UPDATE.length).trim();
      const at = lineNumber();
      index++;
      let moveTo: string | undefined;
      if ((body[index] ?? "").trim().startsWith(MOVE)) {
        moveTo = (body[index] ?? "").trim().slice(MOVE.length).trim();
        index++;
      }
      const chunks: UpdateChunk[] = [];
      while (index < body.length) {
        const chunkLine = body[index] ?? "";
        if (chunkLine.startsWith("***")) break;
        let context: string | undefined;
        if (chunkLine.trim() === "@@") {
          index++;
        } else if (chunkLine.startsWith("@@ ")) {
          context = chunkLine.slice(3);
          index++;
        } else if (chunks.length > 0) {
          throw new PatchError(`line ${lineNumber()}: expected "@@" to start a chunk, got "${chunkLine}"`);
        }
        const oldLines: string[] = [];
        const newLines: string[] = [];
        let endOfFile = false;
        while (index < body.length) {
          const diffLine = body[index] ?? "";
          if (diffLine.trim() === END_OF_FILE) {
            endOfFile = true;
            index++;
            break;
          }
          if (diffLine.startsWith("@@") || diffLine.startsWith("***")) break;
          const marker = diffLine[0];
          const text = diffLine.slice(1);
          if (diffLine === "" || marker === " ") {
            oldLines.push(text);
            newLines.push(text);
          } else if (marker === "-") {
            oldLines.push(text);
          } else if (marker === "+") {
            newLines.push(text);
          } else {
            throw new PatchError(
              `line ${lineNumber()}: "${diffLine}" is not a patch line (start it with " ", "-" or "+")`,
            );
          }
          index++;
        }
        if (oldLines.length === 0 && newLines.length === 0) {
          throw new PatchError(`line ${lineNumber()}: a chunk of "${path}" has no lines`);
        }
        chunks.push({ context, oldLines, newLines, endOfFile });
      }
      if (chunks.length === 0) throw new PatchError(`line ${at}: the update of "${path}" has no chunks`);
      operations.push({ kind: "update", path, ...(moveTo === undefined ? {} : { moveTo }), chunks });
      continue;
    }
    throw new PatchError(
      `line ${lineNumber()}: "${line}" is not a file header (*** Add File:, *** Delete File: or *** Update File:)`,
    );
  }
  if (operations.length === 0) throw new PatchError("the patch has no file operations");
  for (const operation of operations) {
    if (operation.path === "") throw new PatchError(`an *** ${operation.kind} header has no path`);
  }
  return operations;
}

/** Unicode punctuation a model may write for ASCII (dashes, quotes, spaces), read as ASCII. */
function normalizePunctuation(text: string): string {
  return text
    .trim()
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/[\u2018\u2019\u201a\u201b]/g, "'")
    .replace(/[\u201c\u201d\u201e\u201f]/g, '"')
    .replace(/[\u00a0\u2002-\u200a\u202f\u205f\u3000]/g, " ");
}

const COMPARISONS: readonly ((a: string, b: string) => boolean)[] = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
  (a, b) => normalizePunctuation(a) === normalizePunctuation(b),
];

/** Where `pattern` starts in `lines` at or after `start` (from the end when `endOfFile`), loosest match last. */
function seekSequence(
  lines: readonly string[],
  pattern: readonly string[],
  start: number,
  endOfFile: boolean,
): number | undefined {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return undefined;
  const from = endOfFile ? lines.length - pattern.length : start;
  for (const same of COMPARISONS) {
    for (let at = from; at <= lines.length - pattern.length; at++) {
      if (pattern.every((line, offset) => same(lines[at + offset] ?? "", line))) return at;
    }
  }
  return undefined;
}

/** `text` with an update's chunks applied, or a `PatchError` saying which lines of `path` were not found. */
export function applyChunks(text: string, chunks: readonly UpdateChunk[], path: string): string {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const replacements: [start: number, length: number, lines: readonly string[]][] = [];
  let cursor = 0;
  for (const chunk of chunks) {
    if (chunk.context !== undefined) {
      const at = seekSequence(lines, [chunk.context], cursor, false);
      if (at === undefined)
        throw new PatchError(`could not find the context line "${chunk.context}" in ${path}`);
      cursor = at + 1;
    }
    if (chunk.oldLines.length === 0) {
      replacements.push([lines.length, 0, chunk.newLines]);
      continue;
    }
    let oldLines = chunk.oldLines;
    let newLines = chunk.newLines;
    let at = seekSequence(lines, oldLines, cursor, chunk.endOfFile);
    if (at === undefined && oldLines.at(-1) === "") {
      // A trailing blank context line often stands for the end of the file.
      oldLines = oldLines.slice(0, -1);
      if (newLines.at(-1) === "") newLines = newLines.slice(0, -1);
      at = seekSequence(lines, oldLines, cursor, chunk.endOfFile);
    }
    if (at === undefined) {
      throw new PatchError(`could not find these lines in ${path}:\n${chunk.oldLines.join("\n")}`);
    }
    replacements.push([at, oldLines.length, newLines]);
    cursor = at + oldLines.length;
  }
  replacements.sort((a, b) => a[0] - b[0]);
  for (let index = 1; index < replacements.length; index++) {
    const previous = replacements[index - 1];
    const current = replacements[index];
    if (previous && current && current[0] < previous[0] + previous[1]) {
      throw new PatchError(`two chunks of the update of ${path} change the same lines`);
    }
  }
  for (const [start, length, replacement] of [...replacements].reverse()) {
    lines.splice(start, length, ...replacement);
  }
  if (lines.at(-1) !== "") lines.push("");
  return lines.join("\n");
}
