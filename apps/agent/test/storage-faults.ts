// Test support for storage faults on real files: the small disk, the read-only file and the SQLite access
// behind the store's back are the reliability suite's (`@agent-kernel/reliability`, which says why a fault
// cannot be made here instead of failing); this module adds reading an agent database's transcript rows.
import { withDatabase } from "@agent-kernel/reliability";

export { fillLeaving, makeReadOnly, mountSmallDisk, withDatabase } from "@agent-kernel/reliability";

/** One row of `transcript_entries`. */
export interface TranscriptRow {
  readonly seq: number;
  readonly id: string;
  readonly parentId: string | null;
  readonly type: string;
  readonly body: string;
}

/** The transcript rows of the agent database at `path`, in seq order. */
export function transcriptRows(path: string): TranscriptRow[] {
  return withDatabase(path, (db) =>
    db
      .prepare("SELECT seq, id, parent_id AS parentId, type, body FROM transcript_entries ORDER BY seq")
      .all(),
  ) as TranscriptRow[];
}
