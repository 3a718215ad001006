// Replaying the append journal of a process that stopped before folding it. Owns: storing its entries in its
// order with `append`'s rules in one write transaction, where each session's leaf ends up, what the replay
// reports line by line, and removing the file once replayed. A full disk or a read-only database stops the
// replay (rolled back, the journal kept for the next open) instead of counting as a problem of a line. Does
// not own: finding journals or reading their lines (sqlite/append-journal.ts), or when a replay runs (store.ts).
import { unlinkSync } from "node:fs";
import {
  type JournalFile,
  type JournalLine,
  type JournalMarker,
  readJournal,
} from "./sqlite/append-journal.ts";
import { toStorageFailure } from "./storage-errors.ts";
import { transcriptCache } from "./transcript-cache.ts";
import type { TranscriptStatements } from "./transcript-statements.ts";
import { type AppendReplay, assertEntryShape } from "./transcript-types.ts";

/**
 * Stores the entries of a journal whose owner is gone, in its order, in one write transaction, with
 * `append`'s rules (an entry already stored identically was folded before the owner stopped); then removes
 * the file. The file is read under the write lock, so concurrent replayers replay it once; undefined when
 * another one already did. A session's leaf follows the replayed entries, as it followed the owner's
 * appends, unless another writer went on with the session after the owner last folded (a row, or a leaf
 * move, above the journal's marker): then it stays where that writer left it and they form a side branch.
 */
export function replayJournal(statements: TranscriptStatements, file: JournalFile): AppendReplay | undefined {
  const touched: string[] = [];
  const replay = statements.db
    .transaction((): AppendReplay | undefined => {
      let lines: JournalLine[];
      try {
        lines = readJournal(file.path);
      } catch (error) {
        if ((error as { code?: unknown }).code === "ENOENT") return undefined;
        const reason = error instanceof Error ? error.message : String(error);
        return { file: file.path, stored: 0, alreadyStored: 0, problems: [{ line: 0, problem: reason }] };
      }
      let stored = 0;
      let alreadyStored = 0;
      const problems: { line: number; problem: string }[] = [];
      // Per session: its leaf before the replay when another writer went on with it (else undefined).
      const keepLeaf = new Map<string, string | null | undefined>();
      const storedIn = new Set<string>();
      let marker: JournalMarker | undefined;
      for (const line of lines) {
        if ("problem" in line) {
          problems.push({ line: line.line, problem: line.problem });
          continue;
        }
        if ("marker" in line) {
          marker = line.marker;
          continue;
        }
        const { sessionId, entry } = line;
        try {
          assertEntryShape(entry);
          if (!keepLeaf.has(sessionId)) {
            const wentOn = marker !== undefined && statements.changedAfter(sessionId, marker);
            keepLeaf.set(sessionId, wentOn ? statements.storedLeaf(sessionId) : undefined);
          }
          if (statements.insertRow(sessionId, entry, line.body, false) !== 0) {
            stored++;
            storedIn.add(sessionId);
          } else if (statements.storedIdentically(sessionId, entry)) alreadyStored++;
          else problems.push({ line: line.line, problem: statements.whyRefused(sessionId, entry) });
        } catch (error) {
          // A full disk or a read-only file is no problem of this line: the replay stops, rolled back, and
          // the journal stays for the next open (recording it as a line problem would remove the file).
          const failure = toStorageFailure(error, statements.path);
          if (failure !== undefined) throw failure;
          problems.push({
            line: line.line,
            problem: error instanceof Error ? error.message : String(error),
          });
        }
      }
      const now = new Date().toISOString();
      for (const sessionId of storedIn) {
        touched.push(sessionId);
        const leaf = keepLeaf.get(sessionId);
        if (leaf !== undefined) statements.updateLeaf.run(leaf, now, sessionId);
      }
      return { file: file.path, stored, alreadyStored, problems };
    })
    .immediate();
  // This connection's own commit leaves its data_version alone: sessions it had proven current are not.
  for (const sessionId of touched) {
    const session = transcriptCache.find(`${statements.cacheKey}\u0000${sessionId}`);
    if (session !== undefined) session.verifiedBy = undefined;
  }
  if (replay !== undefined && replay.problems[0]?.line !== 0) {
    try {
      unlinkSync(file.path);
    } catch {
      // Gone already, or a read-only folder: replaying it again changes nothing.
    }
  }
  return replay;
}
