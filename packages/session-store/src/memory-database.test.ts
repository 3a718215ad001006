// The database a memory index gets: on SQLite the agent's own database file (what is written through it is in
// that file for the next process), on PostgreSQL an in-memory SQLite database per store and agent (a real
// server).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryDatabaseFor } from "./memory-database.ts";
import { openPostgresSessionStore } from "./postgres/store.ts";
import { type PostgresTestServer, startPostgresServer } from "./postgres/testing/pg-server.ts";
import { openSessionStore } from "./store.ts";

let stateDir: string;
beforeEach(() => {
  stateDir = mkdtempSync(join(tmpdir(), "memory-db-"));
});
afterEach(() => rmSync(stateDir, { recursive: true, force: true }));

describe("memoryDatabaseFor on SQLite", () => {
  it("is the agent's database: an FTS5 table made through it is in the agent's file", async () => {
    const store = await openSessionStore({ stateDir });
    const db = memoryDatabaseFor(store, "Main");
    expect(memoryDatabaseFor(store, "main")).toBe(db);
    db.exec("CREATE VIRTUAL TABLE notes USING fts5(text)");
    db.prepare("INSERT INTO notes (text) VALUES (?)").run("the staging host is db-7");
    const path = store.agentDatabasePath("main");
    await store.close();

    const reopened = new Database(path, { readonly: true });
    expect(reopened.prepare("SELECT text FROM notes WHERE notes MATCH ?").all('"staging"')).toEqual([
      { text: "the staging host is db-7" },
    ]);
    // The store's own tables are in the same file: it is the agent database, not a second one.
    expect(
      reopened.prepare("SELECT name FROM sqlite_master WHERE name = 'transcript_entries'").all(),
    ).toHaveLength(1);
    reopened.close();
  });
});

describe("memoryDatabaseFor on PostgreSQL", () => {
  let server: PostgresTestServer | undefined;
  let connectionString = "";
  beforeAll(async () => {
    server = await startPostgresServer();
    connectionString = await server.createDatabase();
  }, 120_000);
  afterAll(() => server?.stop());

  it("is an in-memory SQLite database per store and agent, with FTS5", async () => {
    const store = await openPostgresSessionStore({ connectionString, schema: "memory_db" });
    try {
      const db = memoryDatabaseFor(store, "main");
      expect(memoryDatabaseFor(store, "MAIN")).toBe(db);
      expect(memoryDatabaseFor(store, "other")).not.toBe(db);
      db.exec("CREATE VIRTUAL TABLE notes USING fts5(text)");
      db.prepare("INSERT INTO notes (text) VALUES (?)").run("Ada prefers tea");
      expect(db.prepare("SELECT text FROM notes WHERE notes MATCH ?").all('"tea"')).toEqual([
        { text: "Ada prefers tea" },
      ]);
    } finally {
      await store.close();
    }
  });
});
