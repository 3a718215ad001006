// The `read` tool over a path view, in bounded memory. Owns: streaming the file from its source and keeping
// only the requested lines (pi's own read tool loads the whole file, so 3 lines of a 500 MB file cost
// gigabytes), pi's limits and continuation notes, describing binary files instead of dumping them, handing the
// images pi can attach to pi's read tool under a size cap, and the host source (the model's path resolved in
// the view, the file opened without following a link or waiting on a FIFO). Here: the tool itself, its
// options and details; the line window is read-window.ts's, the sniffs read-sniffing.ts's, the sources
// read-source.ts's. Does not own: the path rules (path-view.ts), the sandboxed source
// (sandbox-file-operations.ts: a sandboxed command streams the bytes) or image decoding and resizing (pi's).
import { Type } from "@earendil-works/pi-ai";
import {
  createReadToolDefinition,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  defineTool,
  formatSize,
  type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import { describeMounts, type PathView } from "./path-view.ts";
import { BINARY_SNIFF_BYTES, describeMagic, imageMimeTypeOf, looksBinary } from "./read-sniffing.ts";
import { aborted, hostReadSource, type ReadSource, readFully } from "./read-source.ts";
import { readTextWindow, type TextStop } from "./read-window.ts";

export { describeMagic } from "./read-sniffing.ts";
export { hostReadSource, type ReadableFile, type ReadSource } from "./read-source.ts";

export interface BoundedReadToolOptions {
  /** Most lines one call returns. Default: pi's 2000. */
  readonly maxLines?: number | undefined;
  /** Most bytes of text one call returns. Default: pi's 50 KB. */
  readonly maxBytes?: number | undefined;
  /** Larger images are described instead of attached. Default 20 MB. */
  readonly maxImageBytes?: number | undefined;
  /**
   * Bytes read past the returned lines to count the file's lines for "of N"; past it the total is not given.
   * Default 16 MB.
   */
  readonly lineCountScanBytes?: number | undefined;
  /** Where files come from. Default: the host, through the view (`hostReadSource`). */
  readonly source?: ReadSource | undefined;
}

export interface BoundedReadDetails {
  readonly kind: "text" | "binary" | "image";
  /** The file as the model named it, absolute in the view. */
  readonly path: string;
  readonly sizeBytes: number;
  /** Text only: the first and last line returned (1-based; lastLine < firstLine when none). */
  readonly firstLine?: number;
  readonly lastLine?: number;
  /** Text only: the file's line count, when it was counted to the end. */
  readonly totalLines?: number;
  /** Text only: the offset that continues where this read stopped, when more lines follow. */
  readonly nextOffset?: number;
  /** Text only: why the output stopped before the end of the file, if it did. */
  readonly truncatedBy?: TextStop;
}

export const DEFAULT_MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const DEFAULT_LINE_COUNT_SCAN_BYTES = 16 * 1024 * 1024;

// pi's read schema, field for field (the model has learned it), built once.
const READ_PARAMETERS = Type.Object({
  path: Type.String({ description: "Path to the file to read (relative or absolute)" }),
  offset: Type.Optional(Type.Number({ description: "Line number to start reading from (1-indexed)" })),
  limit: Type.Optional(Type.Number({ description: "Maximum number of lines to read" })),
});

/**
 * pi's `read` tool over a path view: the same parameters and output notes, reading only what it returns.
 * Text is streamed (memory stays bounded whatever the file's size); binary files are described; images pi
 * attaches go to pi's read tool when no larger than `maxImageBytes`.
 */
export function createBoundedReadTool(
  view: PathView,
  options: BoundedReadToolOptions = {},
): ToolDefinition<typeof READ_PARAMETERS, BoundedReadDetails> {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxImageBytes = options.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES;
  const countScanBytes = options.lineCountScanBytes ?? DEFAULT_LINE_COUNT_SCAN_BYTES;
  const source = options.source ?? hostReadSource(view);
  return defineTool({
    name: "read",
    label: "read",
    description:
      `Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments (up to ${formatSize(maxImageBytes)}). ` +
      `For text files, output is truncated to ${maxLines} lines or ${maxBytes / 1024}KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete. ` +
      `Binary files are described, not shown. Relative paths start at ${view.cwd}; files are under ${describeMounts(view)}.`,
    promptSnippet: "Read file contents",
    promptGuidelines: ["Use read to examine files instead of cat or sed."],
    parameters: READ_PARAMETERS,
    execute: async (toolCallId, params, signal, _onUpdate, ctx) => {
      if (signal?.aborted) throw aborted();
      const file = await source(params.path, signal);
      try {
        const size = file.size;
        const head = await readFully(file, BINARY_SNIFF_BYTES);
        const magic = describeMagic(head);
        const detailsBase = { path: file.viewPath, sizeBytes: size };
        if (magic?.endsWith(" image")) {
          const mimeType = await imageMimeTypeOf(head);
          if (mimeType) {
            if (size > maxImageBytes) {
              return {
                content: [
                  {
                    type: "text",
                    text: `image file, ${size} bytes (${mimeType}): larger than the ${formatSize(maxImageBytes)} the read tool attaches, so not shown`,
                  },
                ],
                details: { kind: "image", ...detailsBase },
              };
            }
            // pi decodes, resizes and attaches; it gets the bytes read here, never the path to open again.
            const bytes =
              size <= head.length
                ? head.subarray(0, size)
                : Buffer.concat([head, await readFully(file, size - head.length)]);
            const piRead = createReadToolDefinition(view.cwd, {
              operations: {
                access: async () => {},
                readFile: async () => bytes,
                detectImageMimeType: async () => mimeType,
              },
            });
            const result = await piRead.execute(toolCallId, { path: file.viewPath }, signal, undefined, ctx);
            return { content: result.content, details: { kind: "image", ...detailsBase } };
          }
        }
        if (looksBinary(head, head.length >= size)) {
          return {
            content: [
              {
                type: "text",
                text: `binary file, ${size} bytes (${magic === undefined ? "unknown type" : `looks like ${magic}`}); its contents are not shown`,
              },
            ],
            details: { kind: "binary", ...detailsBase },
          };
        }
        const read = await readTextWindow(
          file,
          head,
          size,
          { offset: params.offset, limit: params.limit },
          { maxLines, maxBytes, countScanBytes },
          signal,
        );
        return {
          content: [{ type: "text", text: read.text }],
          details: { kind: "text", ...detailsBase, ...read.details },
        };
      } finally {
        await file.close();
      }
    },
  });
}
