// @agent-kernel/session-store/testing: the conformance suite every backend passes, and the SQLite fixture.
export {
  FIRST_SCHEMA_SAMPLE,
  header,
  messageEntry,
  runSessionStoreConformance,
  type SeededRun,
  type SessionStoreFactory,
  type StoreFixture,
} from "./conformance.ts";
export { runImportConformance } from "./import-conformance.ts";
export { SCHEMA_V1_DIR, seedFirstSchema, sqliteStoreFactory } from "./sqlite-fixture.ts";
