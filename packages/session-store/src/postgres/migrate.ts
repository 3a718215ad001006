// Running migrations on PostgreSQL. Owns: the schema's `schema_migrations` history, refusing a schema written by
// a newer release (`StoreVersionError`) or one that holds other tables and no history (`StoreOpenError`)
// before changing anything, and applying the pending migrations — both parts of each (control plane and
// transcripts share one database) compiled for PostgreSQL — in one transaction under an advisory lock, so
// processes opening the same database at once apply each step once. Does not own: the migrations
// (../migrations/*) or connecting (./connection.ts).
import { type Kysely, sql } from "kysely";
import { StoreOpenError, StoreVersionError } from "../errors.ts";
import { MIGRATIONS } from "../migrations/index.ts";
import type { Migration } from "../migrations/types.ts";
import type { AppliedMigration } from "../migrator.ts";

export const POSTGRES_LATEST_SCHEMA_VERSION: number = MIGRATIONS.reduce(
  (max, m) => Math.max(max, m.version),
  0,
);

/** Tables that mark a schema as a session store's (or one it would collide with). */
const STORE_TABLES = ["sessions", "runs", "transcripts", "transcript_entries"];

export interface PostgresMigrateOptions {
  /** Stop at this version (tests build old schemas with it). Default: the newest. */
  readonly targetVersion?: number;
  readonly migrations?: readonly Migration[];
}

/** Brings `schema` up to date and returns every applied migration. */
export async function migratePostgres(
  db: Kysely<unknown>,
  schema: string,
  where: string,
  options: PostgresMigrateOptions = {},
): Promise<AppliedMigration[]> {
  const migrations = [...(options.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const target = options.targetVersion ?? latest;
  // A read first, so that a newer or foreign schema is refused without taking the lock or writing.
  const before = await readSchemaVersion(db, schema, where);
  if (before > latest) throw new StoreVersionError(where, before, latest);
  if (before < target) {
    await db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${`agent-kernel-session-store:${schema}`}))`.execute(
        trx,
      );
      await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(schema)}`.execute(trx);
      const current = await readSchemaVersion(trx, schema, where);
      if (current > latest) throw new StoreVersionError(where, current, latest);
      await sql`CREATE TABLE IF NOT EXISTS ${sql.id(schema, "schema_migrations")} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`.execute(
        trx,
      );
      for (const migration of migrations) {
        if (migration.version <= current || migration.version > target) continue;
        const statements = [...migration.controlPlane(trx, "postgres"), ...migration.agent(trx, "postgres")];
        for (const statement of statements) await trx.executeQuery(statement);
        await sql`INSERT INTO ${sql.id(schema, "schema_migrations")} (version, name, applied_at) VALUES (${migration.version}, ${migration.name}, ${Date.now()})`.execute(
          trx,
        );
      }
    });
  }
  return listAppliedMigrations(db, schema);
}

/** The highest applied version in `schema`; 0 when it has no store yet. Throws for a schema holding other tables of ours without a history. */
async function readSchemaVersion(db: Kysely<unknown>, schema: string, where: string): Promise<number> {
  const { rows } = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema}`.execute(db);
  const tables = rows.map((row) => row.table_name);
  if (!tables.includes("schema_migrations")) {
    const ours = tables.filter((name) => STORE_TABLES.includes(name));
    if (ours.length > 0) {
      throw new StoreOpenError(
        where,
        `schema ${schema} has tables ${ours.join(", ")} but no schema_migrations, so it is not a session store ` +
          "(or was made by something else); it was left untouched — pass another schema",
      );
    }
    return 0;
  }
  const result = await sql<{ max: number | null }>`
    SELECT MAX(version) AS max FROM ${sql.id(schema, "schema_migrations")}`.execute(db);
  return result.rows[0]?.max ?? 0;
}

export async function listAppliedMigrations(
  db: Kysely<unknown>,
  schema: string,
): Promise<AppliedMigration[]> {
  const { rows } = await sql<{ version: number; name: string; applied_at: number }>`
    SELECT version, name, applied_at FROM ${sql.id(schema, "schema_migrations")} ORDER BY version`.execute(
    db,
  );
  return rows.map((row) => ({ version: row.version, name: row.name, appliedAt: Number(row.applied_at) }));
}
