// The database an agent's memory index lives in (turn-pipeline's MemoryIndex: SQLite FTS5 over the workspace's
// MEMORY.md and memory/*.md). Owns: which connection a store hands out for it — on SQLite the agent's own
// database (OpenClaw keeps its memory index in the agent database too; no second search engine), on a store
// without agent SQLite files (PostgreSQL) an in-memory SQLite database per store and agent, kept for the
// store's life. Does not own: the memory tables (the index creates them, `IF NOT EXISTS`, on its first search)
// nor the files (the workspace's; the index is derived from them and rebuilt from them whenever it is missing).
//
// Why no tsvector index on PostgreSQL: the index holds nothing the files do not (it is re-synced from them on
// every search), so a per-process SQLite index loses nothing but a rebuild on the first search after a start,
// and it keeps one search engine with one ranking (FTS5's bm25) for both backends instead of two to keep equal.
import Database from "better-sqlite3";
import { normalizeAgentId } from "./state-dir.ts";
import type { SessionStore } from "./store.ts";

/** The part of an SQLite connection a memory index uses (better-sqlite3 and node:sqlite both have it). */
export interface MemoryDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): {
    run(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  };
}

/** A store that keeps agent SQLite databases: hands out the agent's connection for its memory index. */
interface StoreWithAgentDatabases {
  memoryDatabase(agentId: string): MemoryDatabase;
}

const hasAgentDatabases = (store: SessionStore): store is SessionStore & StoreWithAgentDatabases =>
  typeof (store as Partial<StoreWithAgentDatabases>).memoryDatabase === "function";

/** Per store without agent databases: each agent's in-memory index database. */
const inMemory = new WeakMap<SessionStore, Map<string, Database.Database>>();

/**
 * The database `agentId`'s memory index lives in, for `store`: the agent's SQLite database on a SQLite store
 * (opened, and migrated, as for its first transcript), else an in-memory SQLite database kept for this store
 * and agent (rebuilt from the files on its first search; see the module comment for why).
 */
export function memoryDatabaseFor(store: SessionStore, agentId: string): MemoryDatabase {
  if (hasAgentDatabases(store)) return store.memoryDatabase(agentId);
  let byAgent = inMemory.get(store);
  if (byAgent === undefined) {
    byAgent = new Map();
    inMemory.set(store, byAgent);
  }
  const key = normalizeAgentId(agentId);
  let db = byAgent.get(key);
  if (db === undefined) {
    db = new Database(":memory:");
    byAgent.set(key, db);
  }
  return db;
}
