// The store's error classes. Owns: one class per failure a caller may want to tell apart (a file that is not a
// database, a database from a newer release, a missing transcript, a conflicting write, a lost patch race).
// Does not own: deciding what to do about them (callers do) or logging.

/** Base class: every error the store throws on purpose is a `SessionStoreError`. */
export class SessionStoreError extends Error {
  override readonly name: string = "SessionStoreError";
}

/** A database file could not be opened or used: not SQLite, corrupt, unreadable, or in a read-only place. */
export class StoreOpenError extends SessionStoreError {
  override readonly name = "StoreOpenError";
  readonly path: string;
  constructor(path: string, reason: string, options?: { cause?: unknown }) {
    super(`cannot open session store database ${path}: ${reason}`, options);
    this.path = path;
  }
}

/** The database was written by a newer release (its schema version is above the newest one this code knows). */
export class StoreVersionError extends SessionStoreError {
  override readonly name = "StoreVersionError";
  readonly path: string;
  readonly databaseVersion: number;
  readonly supportedVersion: number;
  constructor(path: string, databaseVersion: number, supportedVersion: number) {
    super(
      `session store database ${path} has schema version ${databaseVersion}, but this @agent-kernel/session-store ` +
        `supports up to version ${supportedVersion}; upgrade @agent-kernel/session-store (the file was left untouched)`,
    );
    this.path = path;
    this.databaseVersion = databaseVersion;
    this.supportedVersion = supportedVersion;
  }
}

/** `openTranscript` without `init` for a transcript that does not exist. */
export class TranscriptNotFoundError extends SessionStoreError {
  override readonly name = "TranscriptNotFoundError";
  constructor(agentId: string, sessionId: string) {
    super(`no transcript for session ${sessionId} of agent ${agentId} (pass { header } to create it)`);
  }
}

/** A transcript write that contradicts what is stored (an id reused with other content, an unknown parent). */
export class TranscriptConflictError extends SessionStoreError {
  override readonly name = "TranscriptConflictError";
}

/** A session patch lost the race against concurrent writers more times than allowed, or its expected version is stale. */
export class SessionConflictError extends SessionStoreError {
  override readonly name = "SessionConflictError";
}

/** A session, run or other record that must exist does not. */
export class RecordNotFoundError extends SessionStoreError {
  override readonly name = "RecordNotFoundError";
}

/** A keyed write repeated with different content (a run started twice with another session, an event seq reused). */
export class IdempotencyConflictError extends SessionStoreError {
  override readonly name = "IdempotencyConflictError";
}
