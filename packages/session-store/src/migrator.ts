// Running migrations on one SQLite file. Owns: the `schema_migrations` table, refusing a database from a newer
// release or a foreign SQLite file before touching it, and applying pending migrations in order, each in one
// write transaction (so two processes opening the same file at once apply each step once). Does not own: the
// migrations themselves (./migrations/*) or opening the file (./sqlite/connection.ts).
import type { Database } from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { StoreOpenError, StoreVersionError } from "./errors.ts";
import { LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration } from "./migrations/index.ts";

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
  const migrations = [...(options.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const target = options.targetVersion ?? latest;
  const compiler = new Kysely<unknown>({ dialect: new SqliteDialect({ database: db }) });

  const step = db.transaction(() => {
    const current = readSchemaVersion(db, path);
    if (current > latest) throw new StoreVersionError(path, current, latest);
    for (const migration of migrations) {
      if (migration.version <= current || migration.version > target) continue;
      for (const query of migration[part](compiler, "sqlite")) {
        db.prepare(query.sql).run(...(query.parameters as unknown[]));
      }
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
