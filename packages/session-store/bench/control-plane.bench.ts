// The control-plane calls a kernel turn makes, for 200 sessions × 5 turns at once (each session's turns one
// after another, all sessions concurrently, as the kernel's lanes run them): ensure the session, read the
// auth state, start the run, record an auth success, finish the run with its buffered events, patch the
// session (one auth profile per session: with a shared one, the Kysely path loses its compare-and-set races
// five times in a row and fails). The baseline sends every call through the Kysely implementations (what PostgreSQL runs; before the
// SQLite fast paths, every call but the runs' went this way), so the ratios are what the prepared
// better-sqlite3 statements and the background WAL checkpoint save, in the same run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSuite } from "@agent-kernel/bench";
import { type OpenSessionStoreOptions, openSessionStore, type SqliteSessionStore } from "../src/index.ts";

const SESSIONS = 200;
const TURNS = 5;
const AGENT = "main";

interface StoreState {
  readonly dir: string;
  readonly store: SqliteSessionStore;
}

async function turn(store: SqliteSessionStore, session: number, index: number): Promise<void> {
  const sessionKey = `agent:main:bench:${session}`;
  const record = await store.sessions.ensure({ agentId: AGENT, sessionKey });
  await store.auth.list(AGENT);
  const runId = `run-${session}-${index}`;
  await store.runs.start({
    runId,
    agentId: AGENT,
    sessionKey,
    sessionId: record.sessionId,
    entryPoint: "agent",
  });
  await store.auth.update(AGENT, `faux:${session}`, (current) => ({ ...current, lastUsed: Date.now() }));
  await store.runs.finish(runId, {
    status: "succeeded",
    usage: { input: 10, output: 20, total: 30 },
    events: Array.from({ length: 4 }, (_u, seq) => ({
      seq: seq + 1,
      ts: Date.now(),
      stream: seq === 0 ? "lifecycle" : "assistant",
      data: { text: `delta ${seq} of turn ${index}` },
    })),
  });
  await store.sessions.patch({ agentId: AGENT, sessionKey }, (current) => ({
    inputTokens: (current.meta.inputTokens ?? 0) + 10,
    outputTokens: (current.meta.outputTokens ?? 0) + 20,
    updatedAt: Date.now(),
  }));
}

async function sessionTurns(store: SqliteSessionStore, session: number): Promise<void> {
  for (let index = 0; index < TURNS; index++) await turn(store, session, index);
}

function storeCase(name: string, options: Omit<OpenSessionStoreOptions, "stateDir">) {
  return {
    name,
    before: async (): Promise<StoreState> => {
      const dir = mkdtempSync(join(tmpdir(), "bench-control-plane-"));
      return { dir, store: await openSessionStore({ ...options, stateDir: dir }) };
    },
    run: (state: StoreState) =>
      Promise.all(Array.from({ length: SESSIONS }, (_u, session) => sessionTurns(state.store, session))),
    after: async (state: StoreState) => {
      await state.store.close();
      rmSync(state.dir, { recursive: true, force: true });
    },
  };
}

const KYSELY = "Kysely implementations, checkpoint on commit";

export default defineSuite({
  name: `control-plane calls of ${SESSIONS} sessions × ${TURNS} turns at once`,
  baseline: KYSELY,
  iterations: 5,
  warmup: 1,
  itemsPerIteration: SESSIONS * TURNS,
  cases: [
    storeCase(KYSELY, { controlPlaneQueries: "kysely", walCheckpoint: "on-commit" }),
    storeCase("prepared statements, checkpoint on commit", { walCheckpoint: "on-commit" }),
    storeCase("prepared statements, background checkpoint (the default)", {}),
  ],
});
