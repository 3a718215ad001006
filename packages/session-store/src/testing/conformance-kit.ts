// The shared part of the session-store conformance suite. Owns: the fixture contract a backend provides
// (`StoreFixture`, `SessionStoreFactory`), the frozen first-schema sample, and the small helpers every part of the
// suite uses (entries, a store opened and disposed around a test, id picking). Does not own: any test.
import type { RunOwner } from "../runs.ts";
import type { SessionStore } from "../store.ts";
import type { TranscriptEntry, TranscriptHeader } from "../transcript.ts";

/** One isolated storage location of a backend. */
export interface StoreFixture {
  /** Opens the fixture's storage (migrating it). Close the store before opening again to model a restart. */
  open(): Promise<SessionStore>;
  /** Removes the storage. */
  dispose(): Promise<void>;
  /** Optional: fills the (still unopened) storage with the first schema holding `FIRST_SCHEMA_SAMPLE`. */
  seedFirstSchema?(): Promise<void>;
  /** Optional: marks the storage as written by a newer release at schema `version`. */
  seedFutureVersion?(version: number): Promise<void>;
  /**
   * Optional: writes a `running` run owned by `owner` straight into the (migrated, closed) storage, as an open
   * store of another process would have (a backend that tracks live stores also registers `owner.token` as live).
   */
  seedRunningRun?(run: SeededRun): Promise<void>;
}

/** A running run as another process's store wrote it. */
export interface SeededRun {
  readonly runId: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly owner: RunOwner;
}

/** Returns a fresh, isolated, empty fixture each call. */
export type SessionStoreFactory = () => Promise<StoreFixture>;

/** What the frozen first-schema fixture holds (fixtures/schema-v1 for SQLite). */
export const FIRST_SCHEMA_SAMPLE = {
  agentId: "main",
  sessionKey: "agent:main:main",
  sessionId: "0b7c1f7e-0000-4000-8000-00000000v001",
  meta: {
    thinkingLevel: "high",
    modelOverride: "claude-x",
    providerOverride: "anthropic",
    modelOverrideSource: "user",
  },
  runId: "run-v1",
  runEvents: [
    { seq: 1, ts: 1_700_000_000_001, stream: "lifecycle", data: { phase: "start" } },
    { seq: 2, ts: 1_700_000_000_002, stream: "assistant", data: { text: "hello" } },
  ],
  /** Entry ids in append order; `e3` branches from `e1`; the leaf was moved back to `e2`. */
  entryIds: ["e1", "e2", "e3"],
  leafId: "e2",
  branchToLeaf: ["e1", "e2"],
} as const;

export function header(sessionId: string, cwd = "/work"): TranscriptHeader {
  return { type: "session", version: 3, id: sessionId, timestamp: "2026-01-01T00:00:00.000Z", cwd };
}

export function messageEntry(id: string, parentId: string | null, text = `text of ${id}`): TranscriptEntry {
  return {
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: [{ type: "text", text }], timestamp: 1_767_225_601_000 },
  };
}

export async function withStore(
  factory: SessionStoreFactory,
  body: (store: SessionStore, fixture: StoreFixture) => Promise<void>,
) {
  const fixture = await factory();
  const store = await fixture.open();
  try {
    await body(store, fixture);
  } finally {
    await store.close();
    await fixture.dispose();
  }
}

export const ref = { agentId: "main", sessionKey: "agent:main:telegram:direct:42" };

/** Makes transcripts usable through the synchronous calls (PostgreSQL loads them; SQLite has nothing to do). */
export async function load(store: SessionStore, agentId: string, ...sessionIds: string[]): Promise<void> {
  for (const sessionId of sessionIds) await store.loadTranscript(agentId, sessionId);
}

export function ids(entries: readonly TranscriptEntry[]): string[] {
  return entries.map((entry) => entry.id);
}

export function pick<T>(items: readonly T[], index: number): T {
  return items[index % items.length] as T;
}
