import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SQLITE_LATEST_SCHEMA_VERSION } from "../migrations/sqlite-compiled.ts";
import { migrateSqlite } from "../migrator.ts";
import { openSqliteFile } from "./connection.ts";
import { createDatabaseWhole } from "./new-database.ts";

const scratch = () => mkdtempSync(join(tmpdir(), "session-store-new-database-"));
const schema = (path: string) => (db: Database.Database) => migrateSqlite(db, path, "controlPlane");

describe("a missing database built whole (createDatabaseWhole)", () => {
  it("links a complete database in WAL mode, owner-only, with its schema, and leaves nothing else behind", () => {
    const dir = scratch();
    const path = join(dir, "kernel.sqlite");
    expect(createDatabaseWhole(path, schema(path))).toBe(true);
    expect(readdirSync(dir)).toEqual(["kernel.sqlite"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // WAL mode is in the file's header (bytes 18 and 19 are 2), so no open needs to switch it again.
    const header = readFileSync(path).subarray(0, 20);
    expect(header.subarray(0, 15).toString()).toBe("SQLite format 3");
    expect([header[18], header[19]]).toEqual([2, 2]);
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      const version = db.prepare("SELECT MAX(version) FROM schema_migrations").pluck().get();
      expect(version).toBe(SQLITE_LATEST_SCHEMA_VERSION);
      expect(db.prepare("SELECT COUNT(*) FROM sessions").pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });

  it("never replaces a database another creator linked first", () => {
    const dir = scratch();
    const path = join(dir, "kernel.sqlite");
    const first = openSqliteFile(path, {}, dir, schema(path));
    first
      .prepare(
        "INSERT INTO cron_state (job_id, version, consecutive_errors, updated_at) VALUES ('kept', 1, 0, 1)",
      )
      .run();
    first.close();
    // A second creator that looked before the first linked: its own build is thrown away.
    expect(createDatabaseWhole(path, schema(path))).toBe(true);
    expect(readdirSync(dir)).toEqual(["kernel.sqlite"]);
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare("SELECT job_id FROM cron_state").pluck().all()).toEqual(["kept"]);
    } finally {
      db.close();
    }
  });

  it("throws what the schema throws and leaves neither the database nor its temporary file", () => {
    const dir = scratch();
    const path = join(dir, "kernel.sqlite");
    expect(() =>
      createDatabaseWhole(path, (db) => {
        db.exec("CREATE TABLE t (x)");
        db.exec("this is not SQL");
      }),
    ).toThrow(/syntax error/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("opens through openSqliteFile: the new file needs no migration step and takes writes at once", () => {
    const dir = scratch();
    const path = join(dir, "state", "kernel.sqlite");
    const db = openSqliteFile(path, {}, dir, schema(path));
    try {
      expect(migrateSqlite(db, path, "controlPlane").length).toBe(SQLITE_LATEST_SCHEMA_VERSION);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      db.prepare(
        "INSERT INTO cron_state (job_id, version, consecutive_errors, updated_at) VALUES ('j', 1, 0, 1)",
      ).run();
    } finally {
      db.close();
    }
  });

  it("keeps a write a process made before it was killed (-9) right after creating the database", () => {
    const dir = scratch();
    const path = join(dir, "kernel.sqlite");
    const script = join(dir, "kill-after-write.ts");
    const here = import.meta.dirname;
    writeFileSync(
      script,
      [
        `import { migrateSqlite } from ${JSON.stringify(join(here, "..", "migrator.ts"))};`,
        `import { openSqliteFile } from ${JSON.stringify(join(here, "connection.ts"))};`,
        `const path = ${JSON.stringify(path)};`,
        `const db = openSqliteFile(path, {}, ${JSON.stringify(dir)}, (raw) => migrateSqlite(raw, path, "controlPlane"));`,
        `db.prepare("INSERT INTO cron_state (job_id, version, consecutive_errors, updated_at) VALUES ('before-kill', 1, 0, 1)").run();`,
        `process.kill(process.pid, "SIGKILL");`,
      ].join("\n"),
    );
    const child = spawnSync(process.execPath, ["--conditions=@agent-kernel/source", script], {
      encoding: "utf8",
    });
    expect(child.signal).toBe("SIGKILL");
    const db = openSqliteFile(path, {}, dir, schema(path));
    try {
      expect(db.prepare("SELECT job_id FROM cron_state").pluck().all()).toEqual(["before-kill"]);
    } finally {
      db.close();
    }
  });
});
