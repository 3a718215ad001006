// The SQLite fast path of the sessions API: the reads every turn makes (by key, by session id; `patch`,
// `ensure` and `create` read through them) as better-sqlite3 statements prepared once per store. Owns: those
// statements only; the rules, the writes and the optimistic concurrency stay `KyselySessions`' (sessions.ts).
import type Database from "better-sqlite3";
import type { Kysely, Selectable } from "kysely";
import type { ControlPlaneDatabase, SessionsTable } from "../schema.ts";
import { KyselySessions, type SessionRecord, type SessionRef, toSessionRecord } from "../sessions.ts";

type SessionRow = Selectable<SessionsTable>;

export class SqliteSessions extends KyselySessions {
  readonly #byKey: Database.Statement<[string, string], SessionRow>;
  readonly #bySessionId: Database.Statement<[string, string], SessionRow>;

  constructor(db: Kysely<ControlPlaneDatabase>, raw: Database.Database) {
    super(db);
    this.#byKey = raw.prepare("SELECT * FROM sessions WHERE agent_id = ? AND session_key = ?");
    this.#bySessionId = raw.prepare("SELECT * FROM sessions WHERE agent_id = ? AND session_id = ?");
  }

  override async get(ref: SessionRef): Promise<SessionRecord | undefined> {
    const row = this.#byKey.get(ref.agentId, ref.sessionKey);
    return row === undefined ? undefined : toSessionRecord(row);
  }

  override async getBySessionId(agentId: string, sessionId: string): Promise<SessionRecord | undefined> {
    const row = this.#bySessionId.get(agentId, sessionId);
    return row === undefined ? undefined : toSessionRecord(row);
  }
}
