// Tests of creating a missing database whole (new-database.ts): the linked image, a concurrent creator, a
// failing schema, leftovers of a database removed by hand after a crash, and temporary files left by a kill.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  linkSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SQLITE_LATEST_SCHEMA_VERSION } from "../migrations/sqlite-compiled.ts";
import { migrateSqlite } from "../migrator.ts";
import { openSqliteFile } from "./connection.ts";
import { createDatabaseWhole, removeStaleCreations } from "./new-database.ts";

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

  it("does not revive an old WAL left beside a database removed by hand: SQLite's in-place creation drops it", () => {
    const dir = scratch();
    const path = join(dir, "kernel.sqlite");
    const old = new Database(path);
    old.pragma("journal_mode = WAL");
    old.pragma("wal_autocheckpoint = 0");
    old.exec("CREATE TABLE old_data (x); INSERT INTO old_data VALUES ('revived');");
    // the WAL as a crash would leave it (a clean close checkpoints and removes it)
    copyFileSync(`${path}-wal`, join(dir, "kept-wal"));
    old.close();
    rmSync(path);
    copyFileSync(join(dir, "kept-wal"), `${path}-wal`);
    expect(createDatabaseWhole(path, schema(path))).toBe(false);
    const db = openSqliteFile(path, {}, dir, schema(path));
    try {
      migrateSqlite(db, path, "controlPlane");
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'old_data'").all()).toEqual([]);
      expect(db.prepare("SELECT MAX(version) FROM schema_migrations").pluck().get()).toBe(
        SQLITE_LATEST_SCHEMA_VERSION,
      );
    } finally {
      db.close();
    }
  });

  it("removes temporary files of creators that are gone, including a second link to the database", () => {
    const dir = scratch();
    const path = join(dir, "kernel.sqlite");
    openSqliteFile(path, {}, dir, schema(path)).close();
    // a kill between writing and linking (pid of a finished process), a kill between linking and removing
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    });
    const deadPid = Number(gone.stdout);
    writeFileSync(join(dir, `.kernel.sqlite.creating-${deadPid}-0badc0de`), "partial image");
    linkSync(path, join(dir, `.kernel.sqlite.creating-${deadPid}-0000beef`));
    // one of a live creator (this process) is left alone while young, removed once old
    const live = join(dir, `.kernel.sqlite.creating-${process.pid}-00000001`);
    writeFileSync(live, "in progress");
    writeFileSync(join(dir, ".other.sqlite.creating-1-00000002"), "another database's");
    removeStaleCreations(path);
    expect(readdirSync(dir).sort()).toEqual(
      [
        `.kernel.sqlite.creating-${process.pid}-00000001`,
        ".other.sqlite.creating-1-00000002",
        "kernel.sqlite",
      ].sort(),
    );
    expect(statSync(path).nlink).toBe(1);
    utimesSync(live, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    openSqliteFile(path, {}, dir, schema(path)).close();
    expect(readdirSync(dir).sort()).toEqual([".other.sqlite.creating-1-00000002", "kernel.sqlite"]);
  });
});
