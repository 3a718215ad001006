// The conformance suite every session-store backend passes (SQLite and PostgreSQL). Owns: the order in which
// the suite's parts run and its public face. The parts: sessions (conformance-sessions.ts), the transcript tree
// (conformance-transcript.ts), runs and recovery (conformance-runs.ts), auth/queue/cron/channel state
// (conformance-state.ts), migrations (conformance-migrations.ts), legacy import (import-conformance.ts). Does not
// own: backend-specific set-up (the factory) or the shared helpers (conformance-kit.ts).
import type { Transcript } from "../transcript.ts";
import type { SessionStoreFactory } from "./conformance-kit.ts";
import { describeMigrationConformance } from "./conformance-migrations.ts";
import { describeRunConformance } from "./conformance-runs.ts";
import { describeSessionConformance } from "./conformance-sessions.ts";
import { describeStateConformance } from "./conformance-state.ts";
import { describeTranscriptConformance } from "./conformance-transcript.ts";
import { runImportConformance } from "./import-conformance.ts";

export {
  FIRST_SCHEMA_SAMPLE,
  header,
  messageEntry,
  type SeededRun,
  type SessionStoreFactory,
  type StoreFixture,
} from "./conformance-kit.ts";

/** Registers the whole conformance suite for the backend `factory` opens. */
export function runSessionStoreConformance(factory: SessionStoreFactory): void {
  describeSessionConformance(factory);
  describeTranscriptConformance(factory);
  describeRunConformance(factory);
  describeStateConformance(factory);
  describeMigrationConformance(factory);
  runImportConformance(factory);
}

/** Re-exported for backends' own tests. */
export type { Transcript };
