// The ordered list of schema migrations. Owns: which migrations exist and in what order. Does not own: their
// contents (one file each) or running them (../migrator.ts).
import { migration0001 } from "./0001-sessions-transcripts-runs.ts";
import { migration0002 } from "./0002-auth-queue-cron.ts";
import { migration0003 } from "./0003-transcript-seq-index.ts";
import { migration0004 } from "./0004-transcript-derived-leaf.ts";
import { migration0005 } from "./0005-channel-state.ts";
import { migration0006 } from "./0006-run-owner-start-time.ts";
import { migration0007 } from "./0007-sqlite-session-leases.ts";
import type { Migration } from "./types.ts";

export type { Migration, SqlDialectName } from "./types.ts";

export const MIGRATIONS: readonly Migration[] = [
  migration0001,
  migration0002,
  migration0003,
  migration0004,
  migration0005,
  migration0006,
  migration0007,
];

/** The schema version this code writes: the newest migration's version. */
export const LATEST_SCHEMA_VERSION: number = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
