// @agent-kernel/session-store/postgres/testing: a throwaway PostgreSQL server for tests and the PostgreSQL
// conformance fixture. Loads `pg`; never imported by the SQLite entry points.
export { postgresStoreFactory, seedFirstSchema } from "./fixture.ts";
export {
  findPostgresBin,
  PostgresNotInstalledError,
  type PostgresTestServer,
  runSql,
  startPostgresServer,
} from "./pg-server.ts";
