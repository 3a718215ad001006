// The conformance suite through the Kysely implementations (the PostgreSQL path) on SQLite: the store's
// SQLite fast paths (sqlite/*.ts) bypass them, so this is what keeps them honest until PostgreSQL joins.
import { runSessionStoreConformance } from "./testing/conformance.ts";
import { sqliteStoreFactory } from "./testing/sqlite-fixture.ts";

runSessionStoreConformance(sqliteStoreFactory({ controlPlaneQueries: "kysely" }));
