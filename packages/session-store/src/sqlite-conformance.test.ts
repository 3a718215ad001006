// The conformance suite on SQLite (better-sqlite3, real files in a temporary state dir), through the SQLite
// fast paths (the default); kysely-conformance.test.ts runs it through the Kysely implementations.
import { runSessionStoreConformance } from "./testing/conformance.ts";
import { sqliteStoreFactory } from "./testing/sqlite-fixture.ts";

runSessionStoreConformance(sqliteStoreFactory());
