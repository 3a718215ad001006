// The `apply_patch` tool: a patch in the OpenAI/Codex format (apply-patch-format.ts) applied to the session's
// files, confined like `edit` — on the host through the view's path resolution (links followed, none leaving
// the workspace; files opened only when regular), in a sandboxed session through sandboxed file commands.
// Owns: the order of the work — every path checked and every file read and patched in memory before anything
// is written, so a patch with one bad path or one chunk that does not match changes no file — and putting back
// what was already written if a later write fails. Does not own: the patch format, path rules (path-view.ts,
// file-operations.ts) or whether the tool is offered (`tools.exec.applyPatch`, the caller).
import { lstat, mkdir, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { Type } from "@earendil-works/pi-ai";
import { defineTool, type ToolDefinition } from "@earendil-works/pi-coding-agent";
import { applyChunks, PatchError, parsePatch } from "./apply-patch-format.ts";
import {
  hostEditOperations,
  hostWriteOperations,
  locateInView,
  sandboxEditOperations,
  sandboxRemoveFile,
  sandboxWriteOperations,
} from "./file-operations.ts";
import { type PathView, resolveInView } from "./path-view.ts";
import type { ToolSandbox } from "./tool-sandbox.ts";

/** The files a patch touches: located (checked), read, written and removed by their located key. */
interface PatchFiles {
  /** The key of `requested` (a host path, or a path in the sandbox's view) and its path as the model knows it. */
  locate(requested: string): Promise<{ key: string; shown: string }>;
  /** The file's text, or undefined when there is no file. */
  read(key: string): Promise<string | undefined>;
  write(key: string, content: string): Promise<void>;
  remove(key: string): Promise<void>;
}

const isMissing = (error: unknown): boolean => (error as { code?: string }).code === "ENOENT";

function hostFiles(view: PathView): PatchFiles {
  const edit = hostEditOperations();
  const write = hostWriteOperations();
  return {
    locate: async (requested) => {
      const { hostPath, viewPath } = await resolveInView(view, requested, "write");
      return { key: hostPath, shown: viewPath };
    },
    read: async (key) => {
      try {
        return (await edit.readFile(key)).toString("utf8");
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
    write: async (key, content) => {
      await mkdir(dirname(key), { recursive: true });
      await write.writeFile(key, content);
    },
    remove: async (key) => {
      const stats = await lstat(key);
      if (!stats.isFile() && !stats.isSymbolicLink()) throw new Error(`"${key}" is not a file`);
      await unlink(key);
    },
  };
}

function sandboxFiles(sandbox: ToolSandbox, view: PathView, signal: AbortSignal | undefined): PatchFiles {
  const edit = sandboxEditOperations(sandbox, signal);
  const write = sandboxWriteOperations(sandbox, signal);
  return {
    locate: async (requested) => {
      const { viewPath } = locateInView(view, requested, "write");
      return { key: viewPath, shown: viewPath };
    },
    read: async (key) => {
      try {
        return (await edit.readFile(key)).toString("utf8");
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
    write: (key, content) => write.writeFile(key, content),
    remove: (key) => sandboxRemoveFile(sandbox, key, signal),
  };
}

/** One file's change: its text before (undefined: absent) and after (undefined: removed). */
interface PlannedChange {
  readonly key: string;
  readonly shown: string;
  readonly before: string | undefined;
  after: string | undefined;
}

/** What a patch did, file by file: `A` added, `M` modified (or moved here), `D` deleted. */
export interface PatchSummary {
  readonly added: string[];
  readonly modified: string[];
  readonly deleted: string[];
}

/**
 * Applies `input` to the files: parsed, every path located, every file read and changed in memory first;
 * then written. A failure before writing changes nothing; a failed write puts back what was written.
 */
export async function applyPatchToFiles(input: string, files: PatchFiles): Promise<PatchSummary> {
  const operations = parsePatch(input);
  const changes = new Map<string, PlannedChange>();
  const touched = async (requested: string): Promise<PlannedChange> => {
    const { key, shown } = await files.locate(requested);
    let change = changes.get(key);
    if (change === undefined) {
      const before = await files.read(key);
      change = { key, shown, before, after: before };
      changes.set(key, change);
    }
    return change;
  };
  const summary: PatchSummary = { added: [], modified: [], deleted: [] };
  for (const operation of operations) {
    const file = await touched(operation.path);
    if (operation.kind === "add") {
      if (file.after !== undefined) {
        throw new PatchError(
          `cannot add ${file.shown}: it already exists (delete it earlier in the patch to replace it)`,
        );
      }
      file.after = operation.content;
      summary.added.push(file.shown);
      continue;
    }
    if (file.after === undefined) {
      throw new PatchError(`cannot ${operation.kind} ${file.shown}: there is no such file`);
    }
    if (operation.kind === "delete") {
      file.after = undefined;
      summary.deleted.push(file.shown);
      continue;
    }
    const patched = applyChunks(file.after, operation.chunks, file.shown);
    if (operation.moveTo === undefined) {
      file.after = patched;
      summary.modified.push(file.shown);
      continue;
    }
    const destination = await touched(operation.moveTo);
    if (destination !== file) {
      if (destination.after !== undefined) {
        throw new PatchError(
          `cannot move ${file.shown} to ${destination.shown}: it already exists (delete it earlier in the patch to replace it)`,
        );
      }
      file.after = undefined;
    }
    destination.after = patched;
    summary.modified.push(destination.shown);
  }

  const done: PlannedChange[] = [];
  try {
    for (const change of changes.values()) {
      if (change.after === change.before) continue;
      if (change.after === undefined) await files.remove(change.key);
      else await files.write(change.key, change.after);
      done.push(change);
    }
  } catch (error) {
    // Put back what this patch already wrote; a file that cannot be put back is named.
    const notRestored: string[] = [];
    for (const change of done.reverse()) {
      try {
        if (change.before === undefined) await files.remove(change.key);
        else await files.write(change.key, change.before);
      } catch {
        notRestored.push(change.shown);
      }
    }
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `the patch was not applied: ${message}${
        notRestored.length > 0 ? ` (and these files could not be put back: ${notRestored.join(", ")})` : ""
      }`,
    );
  }
  return summary;
}

const APPLY_PATCH_PARAMETERS = Type.Object({
  input: Type.String({
    description: "The whole patch, from *** Begin Patch to *** End Patch",
  }),
});

const DESCRIPTION = `Apply a patch to files in the workspace: add, delete, update or move files in one call. The input is one patch:
*** Begin Patch
*** Add File: path/new.txt
+line 1
*** Update File: src/app.ts
*** Move to: src/main.ts   (optional rename)
@@ a line above the change (optional)
 context line
-old line
+new line
*** Delete File: old.txt
*** End Patch
Update chunks need about 3 lines of context around each change; "*** End of File" after a chunk anchors it at the end. Paths are relative to the workspace. Either the whole patch applies or no file changes.`;

/** The `apply_patch` tool over the session's view (sandboxed file commands when the session is sandboxed). */
export function applyPatchTool(sandbox: ToolSandbox, view: PathView): ToolDefinition {
  return defineTool({
    name: "apply_patch",
    label: "apply_patch",
    description: DESCRIPTION,
    parameters: APPLY_PATCH_PARAMETERS,
    execute: async (_toolCallId, params, signal) => {
      const files = sandbox.sandboxed ? sandboxFiles(sandbox, view, signal) : hostFiles(view);
      const summary = await applyPatchToFiles(params.input, files);
      const lines = [
        ...summary.added.map((path) => `A ${path}`),
        ...summary.modified.map((path) => `M ${path}`),
        ...summary.deleted.map((path) => `D ${path}`),
      ];
      return {
        content: [{ type: "text", text: `Success. Updated the following files:\n${lines.join("\n")}` }],
        details: summary,
      };
    },
  }) as unknown as ToolDefinition;
}
