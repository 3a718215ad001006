// The PostgreSQL transcript (write-through buffer) against the SQLite transcript, in the same run, on a
// throwaway local server (loopback TCP, fsync off: this measures the store's round trips and
// work, not the disk). One turn's writes: SQLite makes each append durable when it returns; PostgreSQL
// applies appends in memory and makes them durable with one flush (one transaction). Loading: a store that
// never saw the session reads it whole; a refresh reads only what was appended since.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSuite } from "@agent-kernel/bench";
import { clearTranscriptCache, openSessionStore, type TranscriptEntry } from "../src/index.ts";
import { openPostgresSessionStore, type PostgresSessionStore } from "../src/postgres/index.ts";
import { startPostgresServer } from "../src/postgres/testing/index.ts";

const TURN_ENTRIES = 6;
const LONG = 2_000;
const AGENT = "main";

const server = await startPostgresServer();
const connectionString = await server.createDatabase("bench");
const pg = await openPostgresSessionStore({ connectionString, schema: "bench" });
const sqliteDir = mkdtempSync(join(tmpdir(), "agent-kernel-pg-bench-"));
const sqlite = await openSessionStore({ stateDir: sqliteDir });
let sessions = 0;

function header(id: string) {
  return { type: "session" as const, version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/work" };
}

function entry(session: string, index: number, parentId: string | null): TranscriptEntry {
  return {
    type: "message",
    id: `${session}-${index}`,
    parentId,
    timestamp: new Date(1_767_225_600_000 + index).toISOString(),
    message: {
      role: index % 2 === 0 ? "user" : "assistant",
      content: [{ type: "text", text: `message ${index}: ${"lorem ipsum dolor sit amet ".repeat(8)}` }],
    },
  };
}

/** A PostgreSQL session with `count` entries, loaded in `pg`. */
async function pgSession(count: number): Promise<string> {
  const id = `s${sessions++}`;
  await pg.loadTranscript(AGENT, id);
  const transcript = pg.openTranscript(AGENT, id, { header: header(id) });
  for (let index = 0; index < count; index++) {
    transcript.append(entry(id, index, index === 0 ? null : `${id}-${index - 1}`));
  }
  await transcript.flush();
  return id;
}

const longPg = await pgSession(LONG);
const longSqlite = `long-${sessions++}`;
{
  const transcript = sqlite.openTranscript(AGENT, longSqlite, { header: header(longSqlite) });
  transcript.appendMany(
    Array.from({ length: LONG }, (_unused, index) =>
      entry(longSqlite, index, index === 0 ? null : `${longSqlite}-${index - 1}`),
    ),
  );
}

export default [
  defineSuite({
    name: `one turn's transcript writes (${TURN_ENTRIES} entries at the leaf of a 20-entry session)`,
    baseline: "SQLite: each append durable when it returns",
    iterations: 40,
    warmup: 3,
    itemsPerIteration: TURN_ENTRIES,
    cases: [
      {
        name: "SQLite: each append durable when it returns",
        before: () => {
          const id = `t${sessions++}`;
          const transcript = sqlite.openTranscript(AGENT, id, { header: header(id) });
          for (let index = 0; index < 20; index++)
            transcript.append(entry(id, index, index === 0 ? null : `${id}-${index - 1}`));
          return { id, transcript };
        },
        run: ({ id, transcript }) => {
          for (let index = 20; index < 20 + TURN_ENTRIES; index++)
            transcript.append(entry(id, index, `${id}-${index - 1}`));
        },
      },
      {
        name: "PostgreSQL: loadTranscript (refresh) + appends + one flush",
        before: () => pgSession(20),
        run: async (id: string) => {
          await pg.loadTranscript(AGENT, id);
          const transcript = pg.openTranscript(AGENT, id);
          for (let index = 20; index < 20 + TURN_ENTRIES; index++)
            transcript.append(entry(id, index, `${id}-${index - 1}`));
          await pg.flush();
        },
      },
      {
        name: "PostgreSQL: a flush after every append (what write-through without a buffer would cost)",
        before: () => pgSession(20),
        run: async (id: string) => {
          const transcript = pg.openTranscript(AGENT, id);
          for (let index = 20; index < 20 + TURN_ENTRIES; index++) {
            transcript.append(entry(id, index, `${id}-${index - 1}`));
            await transcript.flush();
          }
        },
      },
    ],
  }),
  defineSuite({
    name: `reading a ${LONG}-entry linear session before a turn`,
    baseline: "SQLite: getBranch, cold (read cache cleared)",
    iterations: 15,
    warmup: 2,
    itemsPerIteration: LONG,
    cases: [
      {
        name: "SQLite: getBranch, cold (read cache cleared)",
        before: () => clearTranscriptCache(),
        run: () => sqlite.openTranscript(AGENT, longSqlite).getBranch(),
      },
      {
        name: "SQLite: getBranch, warm",
        run: () => sqlite.openTranscript(AGENT, longSqlite).getBranch(),
      },
      {
        name: "PostgreSQL: loadTranscript + getBranch in a store that never loaded it",
        before: () => openPostgresSessionStore({ connectionString, schema: "bench", maxConnections: 1 }),
        run: async (reader: PostgresSessionStore) => {
          await reader.loadTranscript(AGENT, longPg);
          return reader.openTranscript(AGENT, longPg).getBranch();
        },
        after: (reader: PostgresSessionStore) => reader.close(),
      },
      {
        name: "PostgreSQL: loadTranscript (refresh, nothing new) + getBranch",
        run: async () => {
          await pg.loadTranscript(AGENT, longPg);
          return pg.openTranscript(AGENT, longPg).getBranch();
        },
      },
    ],
  }),
];

process.on("exit", () => {
  server.stop();
  rmSync(sqliteDir, { recursive: true, force: true });
});
