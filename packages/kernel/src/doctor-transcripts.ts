// The doctor's look at one session's transcript. Owns: reading every entry (so a damaged row is found, set
// aside by the store and reported, even off the active branch), the active branch's parent chain from the
// leaf to the root (an entry naming a parent the transcript does not hold cuts the branch short, silently for
// every turn: reported with the entry and the missing parent), the leaf being the branch's end, and listing
// the rows set aside earlier. Does not own: opening the store or the rest of the check (admin.ts), or what
// setting a row aside does (session-store's transcript-quarantine.ts).
import {
  findStorageFailure,
  type QuarantinedRow,
  type SessionStore,
  type SqliteTranscript,
} from "@agent-kernel/session-store";

export interface TranscriptProblem {
  readonly where: string;
  readonly problem: string;
}

/** A transcript row the store set aside as damaged, with where it is. */
export interface QuarantinedTranscriptRow extends QuarantinedRow {
  readonly agentId: string;
  readonly sessionKey: string;
  /** The agent database holding it (SQLite); undefined for a store without files. */
  readonly file: string | undefined;
}

export interface TranscriptCheck {
  readonly problems: readonly TranscriptProblem[];
  readonly quarantined: readonly QuarantinedTranscriptRow[];
}

/** Checks the transcript of `sessionId` (which exists); `where` names the session in problems. */
export function checkTranscript(
  store: SessionStore,
  agentId: string,
  session: { readonly sessionKey: string; readonly sessionId: string },
  where: string,
): TranscriptCheck {
  const problems: TranscriptProblem[] = [];
  const file = agentFileOf(store, agentId);
  try {
    const transcript = store.openTranscript(agentId, session.sessionId);
    // Every entry, parsed: a damaged row anywhere is found now (and set aside once, which throws once).
    try {
      transcript.getEntries();
    } catch (error) {
      const failure = findStorageFailure(error);
      if (failure === undefined || failure.kind !== "corrupt") throw error;
      problems.push({ where, problem: failure.message });
      transcript.getEntries();
    }
    // SQLite lists what it set aside; a store without it sets nothing aside.
    const quarantinedRows =
      (transcript as Partial<Pick<SqliteTranscript, "quarantined">>).quarantined?.() ?? [];
    const setAside = new Set(quarantinedRows.map((row) => row.id));
    const branch = transcript.getBranch();
    const leaf = transcript.getLeafId();
    const first = branch[0];
    if (first !== undefined && first.parentId !== null) {
      const parent = first.parentId;
      problems.push({
        where,
        problem:
          `the active branch is broken: entry ${first.id} names parent ${parent}, which ` +
          (setAside.has(parent) ? "was set aside as damaged" : "is not in the transcript") +
          `, so every turn sees only the ${branch.length} entries from it to the leaf ${leaf}; restore ` +
          `${file ?? "the store"} from a backup to get the rest back, or start a new session`,
      });
    }
    if (leaf !== null && branch.at(-1)?.id !== leaf) {
      problems.push({ where, problem: `the branch does not end at the leaf ${leaf}` });
    }
    return {
      problems,
      quarantined: quarantinedRows.map((row) => ({ ...row, agentId, sessionKey: session.sessionKey, file })),
    };
  } catch (error) {
    problems.push({ where, problem: `transcript unreadable: ${(error as Error).message}` });
    return { problems, quarantined: [] };
  }
}

function agentFileOf(store: SessionStore, agentId: string): string | undefined {
  const path = (store as { agentDatabasePath?: unknown }).agentDatabasePath;
  return typeof path === "function" ? String(path.call(store, agentId)) : undefined;
}
