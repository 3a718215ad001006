// @agent-kernel/kernel/testing: what the entry points' tests need to run the kernel on its other store, without
// depending on the session-store themselves (apps sit on the kernel only): a throwaway PostgreSQL server.
// Loads `pg`; nothing in the kernel's own entry points imports it.
export {
  PostgresNotInstalledError,
  type PostgresTestServer,
  startPostgresServer,
} from "@agent-kernel/session-store/postgres/testing";
