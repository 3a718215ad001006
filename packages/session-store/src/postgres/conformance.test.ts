// The conformance suite on PostgreSQL: a real server started for this file (pg-server.ts), one schema per
// fixture. Every test that passes on SQLite (sqlite-conformance.test.ts) passes here.
import { afterAll, beforeAll } from "vitest";
import { runSessionStoreConformance } from "../testing/conformance.ts";
import { postgresStoreFactory } from "./testing/fixture.ts";
import { type PostgresTestServer, startPostgresServer } from "./testing/pg-server.ts";

let server: PostgresTestServer | undefined;
let connectionString = "";

beforeAll(async () => {
  server = await startPostgresServer();
  connectionString = await server.createDatabase();
});

afterAll(() => server?.stop());

runSessionStoreConformance(() => postgresStoreFactory(connectionString)());
