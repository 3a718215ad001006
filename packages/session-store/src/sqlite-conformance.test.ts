// The conformance suite on SQLite (better-sqlite3, real files in a temporary state dir).
import { runSessionStoreConformance } from "./testing/conformance.ts";
import { sqliteStoreFactory } from "./testing/sqlite-fixture.ts";

runSessionStoreConformance(sqliteStoreFactory());
