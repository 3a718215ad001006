// The shape of one schema migration. Owns: the contract every src/migrations/NNNN-*.ts file fulfils. Does not
// own: running them (../migrator.ts).
import type { CompiledQuery, Kysely } from "kysely";

/** Which database engine a migration compiles for; PostgreSQL holds both parts in one database. */
export type SqlDialectName = "sqlite" | "postgres";

/**
 * One forward-only schema step. Migrations are built with Kysely's schema builder and compiled to statements,
 * so the SQLite runner can apply them synchronously (a transcript database is opened from a synchronous call)
 * and a PostgreSQL runner can apply the same steps asynchronously. Never edit a released migration: add one.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  /** Statements for the control-plane database (`state/kernel.sqlite`). */
  readonly controlPlane: (db: Kysely<unknown>, dialect: SqlDialectName) => readonly CompiledQuery[];
  /** Statements for each agent database (`agents/<agentId>/agent.sqlite`). */
  readonly agent: (db: Kysely<unknown>, dialect: SqlDialectName) => readonly CompiledQuery[];
}
