// A prepared-statement cache between Kysely and one better-sqlite3 connection. Owns: handing Kysely's SQLite
// driver the statement already prepared for the same SQL text (least recently used first out, bounded), so
// a query Kysely compiles again does not make SQLite parse and plan it again. Does not own: building or
// compiling queries (Kysely) or the hot paths that skip Kysely altogether (sqlite/runs.ts, sqlite/sessions.ts).
//
// Why it is sound: Kysely's SQLite driver prepares a statement, runs it to completion with `all`/`run` and
// drops it; nothing keeps a statement between two calls except `iterate` (Kysely's `stream()`, which the
// store never uses: a cached statement that is mid-iteration would refuse a second use, so streaming gets a
// fresh statement). SQLite re-prepares a statement itself when the schema changes under it.
import type Database from "better-sqlite3";
import type { SqliteDatabase, SqliteStatement } from "kysely";

/** Distinct SQL texts kept: the store's queries are a few dozen shapes; dynamic `IN (...)` lists add some. */
export const DEFAULT_STATEMENT_CACHE_SIZE = 256;

/** The `SqliteDatabase` Kysely's `SqliteDialect` takes, preparing each distinct SQL text once. */
export function cachingDatabase(
  raw: Database.Database,
  capacity: number = DEFAULT_STATEMENT_CACHE_SIZE,
): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      raw.close();
    },
    prepare: (sql: string): SqliteStatement => {
      const cached = statements.get(sql);
      if (cached !== undefined) {
        // Re-inserting marks it most recently used (a Map iterates in insertion order).
        statements.delete(sql);
        statements.set(sql, cached);
        return cached;
      }
      const statement = reusable(raw.prepare(sql), raw, sql);
      statements.set(sql, statement);
      if (statements.size > capacity) {
        const oldest = statements.keys().next().value;
        if (oldest !== undefined) statements.delete(oldest);
      }
      return statement;
    },
  };
}

/** The cached statement for `all`/`run`; `iterate` on a fresh one, so a stream never blocks the cache. */
function reusable(statement: Database.Statement, raw: Database.Database, sql: string): SqliteStatement {
  return {
    reader: statement.reader,
    // Kysely passes the parameters as one array, which better-sqlite3 binds positionally.
    all: (parameters) => statement.all(parameters),
    run: (parameters) => statement.run(parameters),
    iterate: (parameters) => raw.prepare(sql).iterate(parameters),
  };
}
