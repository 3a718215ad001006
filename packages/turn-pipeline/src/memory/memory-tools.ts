// The `memory_search` and `memory_get` tools over a MemoryIndex, as pi tool definitions (names and shapes as
// OpenClaw's memory tools). Owns: their parameters, descriptions and results. Does not own: the index
// (memory-index.ts), which database it lives in, nor whether a session gets the tools (the tool policy and the
// executor's tool list).
import { Type } from "@earendil-works/pi-ai";
import { defineTool, type ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { MemoryIndex } from "./memory-index.ts";

const SEARCH_PARAMETERS = Type.Object({
  query: Type.String({ description: "What to look for: words, names, dates" }),
  maxResults: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: "Default 6" })),
});
const GET_PARAMETERS = Type.Object({
  path: Type.String({ description: "MEMORY.md, USER.md or memory/<name>.md, as memory_search returns it" }),
  from: Type.Optional(Type.Integer({ minimum: 1, description: "First line (1-based); default 1" })),
  lines: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 2000, description: "How many lines; default 200" }),
  ),
});

/**
 * `memory_search` and `memory_get` over `index`, or over the index `index()` makes on the first call (a
 * session's tools are built before any turn needs them: making the index, and so touching the database, waits
 * for a memory tool to run).
 */
export function memoryTools(index: MemoryIndex | (() => MemoryIndex)): ToolDefinition[] {
  let made: MemoryIndex | undefined = typeof index === "function" ? undefined : index;
  const indexNow = (): MemoryIndex => {
    made ??= (index as () => MemoryIndex)();
    return made;
  };
  const search = defineTool({
    name: "memory_search",
    label: "memory_search",
    description:
      "Search the agent's memory files (MEMORY.md, USER.md, Markdown files under memory/) for prior work, decisions, dates, people, preferences and todos. Returns path and line ranges with the matching text.",
    parameters: SEARCH_PARAMETERS,
    execute: async (_toolCallId, params) => {
      const hits = indexNow().search(params.query, params.maxResults ?? 6);
      const text =
        hits.length === 0
          ? "No matches in memory."
          : hits.map((hit) => `${hit.path}#L${hit.startLine}-L${hit.endLine}\n${hit.text}`).join("\n\n");
      return {
        content: [{ type: "text", text }],
        details: { results: hits.map(({ path, startLine, endLine }) => ({ path, startLine, endLine })) },
      };
    },
  });
  const get = defineTool({
    name: "memory_get",
    label: "memory_get",
    description:
      "Read lines of a memory file (MEMORY.md, USER.md or memory/<name>.md), e.g. around a memory_search hit.",
    parameters: GET_PARAMETERS,
    execute: async (_toolCallId, params) => {
      const read = indexNow().get(params.path, params.from ?? 1, params.lines ?? 200);
      return {
        content: [{ type: "text", text: read.text }],
        details: { path: read.path, from: read.from, to: read.to },
      };
    },
  });
  return [search, get] as unknown as ToolDefinition[];
}
