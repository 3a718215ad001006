// Running migrations on one SQLite file. Owns: the `schema_migrations` table, refusing a database from a newer
// release or a foreign SQLite file before touching it, and applying pending migrations in order, each in one
// write transaction (so two processes opening the same file at once apply each step once). Does not own: the
// migrations themselves (./migrations/*) or opening the file (./sqlite/connection.ts). The store's own
// migrations run from their precompiled SQL (./migrations/sqlite-compiled.ts), so opening a store loads no
// Kysely; migrations passed in by a caller are compiled with Kysely.
import type { Database } from "better-sqlite3";
import { StoreOpenError, StoreVersionError } from "./errors.ts";
import {
  type CompiledSqliteMigration,
  SQLITE_LATEST_SCHEMA_VERSION as LATEST_SCHEMA_VERSION,
  SQLITE_MIGRATIONS,
} from "./migrations/sqlite-compiled.ts";
import type { Migration } from "./migrations/types.ts";
import { loadKysely } from "./sqlite/connection.ts";

/** Which of the two SQLite databases a file is. */
export type DatabasePart = "controlPlane" | "agent";

export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
  /** Epoch milliseconds. */
  readonly appliedAt: number;
}

export interface MigrateOptions {
  /** Stop at this version (tests build frozen copies of old schemas with it). Default: the newest. */
  readonly targetVersion?: number;
  readonly migrations?: readonly Migration[];
}

const MIGRATIONS_TABLE = "schema_migrations";

/** Brings the file at `path` (already open as `db`) up to date and returns every applied migration. */
export function migrateSqlite(
  db: Database,
  path: string,
  part: DatabasePart,
  options: MigrateOptions = {},
): AppliedMigration[] {
  const migrations = [...(options.migrations ?? SQLITE_MIGRATIONS)].sort((a, b) => a.version - b.version);
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const target = options.targetVersion ?? latest;

  // All pending steps in one transaction: a new file is created in one commit, each step still recorded.
  const step = db.transaction(() => {
    const current = readSchemaVersion(db, path);
    if (current > latest) throw new StoreVersionError(path, current, latest);
    let statementsOf: ((migration: Migration | CompiledSqliteMigration) => StatementList) | undefined;
    for (const migration of migrations) {
      if (migration.version <= current || migration.version > target) continue;
      statementsOf ??=
        options.migrations === undefined ? precompiledStatements(part) : compiledStatements(db, part);
      for (const [sql, parameters] of statementsOf(migration)) db.prepare(sql).run(...parameters);
      db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_at) VALUES (?, ?, ?)`).run(
        migration.version,
        migration.name,
        Date.now(),
      );
    }
  });
  // A read first, so that a newer or foreign file is refused without taking the write lock or writing.
  const before = readSchemaVersion(db, path);
  if (before > latest) throw new StoreVersionError(path, before, latest);
  if (before < target) step.immediate();
  return listAppliedMigrations(db);
}

type StatementList = readonly (readonly [sql: string, parameters: readonly unknown[]])[];

function precompiledStatements(part: DatabasePart) {
  return (migration: Migration | CompiledSqliteMigration): StatementList => {
    const statements = migration[part];
    if (typeof statements === "function")
      throw new Error(`migration ${migration.version} is not precompiled`);
    return statements.map((sql) => [sql, []] as const);
  };
}

function compiledStatements(db: Database, part: DatabasePart) {
  const { Kysely, SqliteDialect } = loadKysely();
  const compiler = new Kysely<unknown>({ dialect: new SqliteDialect({ database: db }) });
  return (migration: Migration | CompiledSqliteMigration): StatementList => {
    const build = migration[part];
    if (typeof build !== "function") return build.map((sql) => [sql, []] as const);
    return build(compiler, "sqlite").map((query) => [query.sql, query.parameters] as const);
  };
}

/** The highest applied migration version; 0 for an empty file. Throws for a SQLite file that is not ours. */
export function readSchemaVersion(db: Database, path: string): number {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[];
  if (!tables.includes(MIGRATIONS_TABLE)) {
    if (tables.length > 0) {
      throw new StoreOpenError(
        path,
        `it is a SQLite database but not a session store (it has tables ${tables.slice(0, 5).join(", ")} ` +
          `and no ${MIGRATIONS_TABLE}); it was left untouched`,
      );
    }
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
    );
    return 0;
  }
  const max = db.prepare(`SELECT MAX(version) FROM ${MIGRATIONS_TABLE}`).pluck().get();
  return typeof max === "number" ? max : 0;
}

export function listAppliedMigrations(db: Database): AppliedMigration[] {
  const rows = db
    .prepare(`SELECT version, name, applied_at FROM ${MIGRATIONS_TABLE} ORDER BY version`)
    .all() as { version: number; name: string; applied_at: number }[];
  return rows.map((row) => ({ version: row.version, name: row.name, appliedAt: row.applied_at }));
}

export { LATEST_SCHEMA_VERSION };
