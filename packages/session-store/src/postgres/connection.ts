// Connecting the store to PostgreSQL. Owns: making (or borrowing) a `pg` pool, reading int8 as a JS number
// (every bigint column holds epoch milliseconds or a counter, far below 2^53), pinning the store's schema
// through `search_path` on every connection, and the Kysely instance over it all. Does not own: migrations
// (./migrate.ts) or any query (the store and the Kysely API classes).
import { CompiledQuery, Kysely, PostgresDialect, type PostgresPool } from "kysely";
import pg from "pg";
import { SessionStoreError } from "../errors.ts";

/** Where the store lives: a connection string or a pool the caller owns, and an optional schema. */
export interface PostgresConnectionOptions {
  /** `postgres://user@host:port/database`; the store makes (and on close ends) its own pool. */
  readonly connectionString?: string;
  /** A pool the caller owns: the store never ends it. */
  readonly pool?: pg.Pool;
  /** The schema holding the store's tables (created when missing). Default: `public`. */
  readonly schema?: string;
  /** Connections of the store's own pool (default 10). */
  readonly maxConnections?: number;
}

const INT8_OID = 20;

function parseInt8(value: string): number {
  return Number(value);
}

/** An identifier safe to splice into SQL: letters, digits and `_`, not starting with a digit. */
export function checkSchemaName(schema: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new SessionStoreError(
      `invalid PostgreSQL schema name ${JSON.stringify(schema)}: use letters, digits and _ (at most 63, not starting with a digit)`,
    );
  }
  return schema;
}

export interface PostgresConnection {
  readonly db: Kysely<unknown>;
  readonly schema: string;
  /** Names the database in errors: host, port, database and schema, never a password. */
  readonly where: string;
  /** Ends the store's own pool, or detaches from a borrowed one (its other users keep it). */
  close(): Promise<void>;
}

export function connectPostgres(options: PostgresConnectionOptions): PostgresConnection {
  const schema = checkSchemaName(options.schema ?? "public");
  if ((options.pool === undefined) === (options.connectionString === undefined)) {
    throw new SessionStoreError("openPostgresSessionStore needs exactly one of connectionString or pool");
  }
  const owned = options.pool === undefined;
  // allowExitOnIdle: idle connections (and the unref'd heartbeat, ./owners.ts) never keep a process alive.
  const pool =
    options.pool ??
    new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      allowExitOnIdle: true,
    });
  // Per client as it connects (before it is handed out), so a borrowed pool's other users keep their parsers.
  // A borrowed pool's clients connected before the store opened are not changed: pass a fresh pool.
  const parseOnConnect = (client: pg.PoolClient) => client.setTypeParser(INT8_OID, "text", parseInt8);
  pool.on("connect", parseOnConnect);
  // A store must not fail the process when an idle connection dies (the server restarted): the next query
  // gets a new one and reports its own error.
  if (owned) pool.on("error", () => {});
  const kyselyPool: PostgresPool = owned
    ? pool
    : { connect: () => pool.connect(), end: async () => {}, options: pool.options };
  const setPath = CompiledQuery.raw(`SET search_path TO "${schema}"`);
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({
      pool: kyselyPool,
      onCreateConnection: async (connection) => {
        await connection.executeQuery(setPath);
      },
    }),
  });
  return {
    db,
    schema,
    where: describeDatabase(pool, schema),
    close: async () => {
      await db.destroy();
      if (!owned) pool.off("connect", parseOnConnect);
    },
  };
}

function describeDatabase(pool: pg.Pool, schema: string): string {
  const options = pool.options as {
    connectionString?: string;
    host?: string;
    port?: number;
    database?: string;
  };
  let target = `${options.host ?? "localhost"}:${options.port ?? 5432}/${options.database ?? ""}`;
  if (options.connectionString !== undefined) {
    try {
      const url = new URL(options.connectionString);
      target = `${url.hostname || url.searchParams.get("host") || "localhost"}:${url.port || 5432}${url.pathname}`;
    } catch {
      target = "(unparsable connection string)";
    }
  }
  return `postgres://${target} (schema ${schema})`;
}
