// The agent's memory: full-text search over MEMORY.md and memory/*.md, and the memory_search / memory_get tools.
export {
  MAX_FILE_BYTES,
  MAX_FILES,
  type MemoryDatabase,
  type MemoryHit,
  MemoryIndex,
} from "./memory-index.ts";
export { memoryTools } from "./memory-tools.ts";
