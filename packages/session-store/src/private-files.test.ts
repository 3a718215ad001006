// State at rest is owner-only: a store opened in a new state dir creates its folders 0700 and its databases,
// their -wal/-shm files and its append journals 0600 (under any umask, so not by luck of a 022 one); an older
// install's 0755 folders and 0644 files are tightened when the store opens them; SQLite gives a database's
// companion files the database file's mode; the helpers leave what is not state alone.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  ensurePrivateDatabase,
  ensurePrivateDir,
  ensurePrivateFile,
  isPrivateMode,
  tightenFile,
} from "./private-files.ts";
import { listJournals } from "./sqlite/append-journal.ts";
import { agentDatabasePath, controlPlanePath } from "./state-dir.ts";
import { openSessionStore, type SqliteSessionStore } from "./store.ts";
import { header, messageEntry } from "./testing/conformance.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A parent folder that is not itself private (like a home folder), so nothing passes by inheriting it. */
function parent(): string {
  const root = mkdtempSync(join(tmpdir(), "agent-kernel-private-"));
  roots.push(root);
  chmodSync(root, 0o755);
  return root;
}

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}

/** Every path's mode, so a failure names every file that is wrong at once. */
function modes(paths: readonly string[]): Record<string, string> {
  return Object.fromEntries(paths.map((path) => [path, octal(modeOf(path))]));
}

function expectModes(paths: readonly string[], mode: number): void {
  for (const path of paths) expect(existsSync(path), `${path} exists`).toBe(true);
  expect(modes(paths)).toEqual(Object.fromEntries(paths.map((path) => [path, octal(mode)])));
}

function withUmask<T>(mask: number, run: () => T): T {
  const previous = process.umask(mask);
  try {
    return run();
  } finally {
    process.umask(previous);
  }
}

/** A store with a session whose transcript has journaled appends not yet folded (so the journal exists). */
async function storeWithTranscript(stateDir: string): Promise<SqliteSessionStore> {
  const store = await openSessionStore({ stateDir });
  await store.sessions.create({ agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" });
  const transcript = store.openTranscript("main", "s1", { header: header("s1") });
  transcript.append(messageEntry("a", null, "sk-live-secret-that-reached-a-transcript"));
  transcript.append(messageEntry("b", "a"));
  return store;
}

function databaseFiles(stateDir: string): string[] {
  const files: string[] = [];
  for (const db of [controlPlanePath(stateDir), agentDatabasePath(stateDir, "main")]) {
    files.push(db, `${db}-wal`, `${db}-shm`);
  }
  return files;
}

function stateFolders(stateDir: string): string[] {
  return [stateDir, join(stateDir, "state"), join(stateDir, "agents"), join(stateDir, "agents", "main")];
}

describe("a new store's files", () => {
  it("are created owner-only: folders 0700, databases with their -wal/-shm and the append journal 0600", async () => {
    const stateDir = join(parent(), "missing", "state-dir");
    const store = await storeWithTranscript(stateDir);
    try {
      const journals = listJournals(agentDatabasePath(stateDir, "main")).map((journal) => journal.path);
      expect(journals).toHaveLength(1);
      expectModes(stateFolders(stateDir), 0o700);
      // A missing parent of the state dir is created owner-only too (it is created for the state dir alone).
      expectModes([dirname(stateDir)], 0o700);
      expectModes([...databaseFiles(stateDir), ...journals], 0o600);
    } finally {
      await store.close();
    }
  });

  it("are owner-only under a umask that would leave them readable by everyone (0000)", async () => {
    const stateDir = join(parent(), "state-dir");
    const store = await withUmask(0o000, () => storeWithTranscript(stateDir));
    try {
      const journals = listJournals(agentDatabasePath(stateDir, "main")).map((journal) => journal.path);
      expectModes(stateFolders(stateDir), 0o700);
      expectModes([...databaseFiles(stateDir), ...journals], 0o600);
    } finally {
      await store.close();
    }
  });

  it("stay owner-only after a reopen, and nothing the store left behind is readable by others", async () => {
    const stateDir = join(parent(), "state-dir");
    await (await storeWithTranscript(stateDir)).close();
    const store = await openSessionStore({ stateDir });
    try {
      expect(store.openTranscript("main", "s1").getBranch()).toHaveLength(2);
      const everything = walk(stateDir);
      expect(everything.length).toBeGreaterThan(5);
      const shared = everything.filter((path) => !isPrivateMode(statSync(path).mode));
      expect(shared).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe("an older install's state dir (0755 folders, 0644 files)", () => {
  it("is tightened when the store opens it: folders, databases and their -wal/-shm", async () => {
    const stateDir = join(parent(), "state-dir");
    await (await storeWithTranscript(stateDir)).close();
    // Another connection keeps the -wal and -shm files in place, as a second process would.
    const holders = [controlPlanePath(stateDir), agentDatabasePath(stateDir, "main")].map((path) => {
      const db = new Database(path);
      db.prepare("SELECT count(*) FROM schema_migrations").get();
      return db;
    });
    try {
      for (const folder of stateFolders(stateDir)) chmodSync(folder, 0o755);
      for (const file of databaseFiles(stateDir)) chmodSync(file, 0o644);
      expectModes(databaseFiles(stateDir), 0o644);

      const store = await openSessionStore({ stateDir });
      try {
        // The control plane is opened with the store; an agent's database with its first transcript.
        expectModes([stateDir, join(stateDir, "state")], 0o700);
        expectModes(databaseFiles(stateDir).slice(0, 3), 0o600);
        expectModes(databaseFiles(stateDir).slice(3), 0o644);
        expect(store.openTranscript("main", "s1").getBranch()).toHaveLength(2);
        expectModes(stateFolders(stateDir), 0o700);
        expectModes(databaseFiles(stateDir), 0o600);
      } finally {
        await store.close();
      }
    } finally {
      for (const db of holders) db.close();
    }
  });

  it("keeps group and other bits off without touching the owner's (a 0640 database becomes 0600, 0750 0700)", () => {
    const dir = join(parent(), "state-dir");
    mkdirSync(dir, { mode: 0o750 });
    chmodSync(dir, 0o750);
    const file = join(dir, "kernel.sqlite");
    writeFileSync(file, "");
    chmodSync(file, 0o640);
    ensurePrivateDir(dir);
    ensurePrivateDatabase(file);
    expect(octal(modeOf(dir))).toBe("0700");
    expect(octal(modeOf(file))).toBe("0600");
  });
});

describe("SQLite's companion files", () => {
  it("take the database file's mode: a rollback -journal and a -wal/-shm of a 0600 database are 0600", () => {
    const dir = join(parent(), "db");
    ensurePrivateDir(dir);
    const rollback = join(dir, "rollback.sqlite");
    ensurePrivateFile(rollback);
    const db = new Database(rollback);
    try {
      db.exec("BEGIN; CREATE TABLE t (x); INSERT INTO t VALUES (1);");
      // The journal exists while the transaction is open; SQLite's own default would be 0644 under umask 022.
      expectModes([`${rollback}-journal`], 0o600);
      db.exec("COMMIT");
    } finally {
      db.close();
    }
    const wal = join(dir, "wal.sqlite");
    ensurePrivateFile(wal);
    const walDb = new Database(wal);
    try {
      walDb.pragma("journal_mode = WAL");
      walDb.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1);");
      expectModes([`${wal}-wal`, `${wal}-shm`], 0o600);
    } finally {
      walDb.close();
    }
  });
});

describe("the helpers", () => {
  it("ensurePrivateFile creates an empty file without touching an existing one's content", () => {
    const dir = parent();
    const file = join(dir, "kernel.sqlite");
    ensurePrivateFile(file);
    expect(statSync(file).size).toBe(0);
    writeFileSync(file, "content");
    chmodSync(file, 0o644);
    ensurePrivateFile(file);
    expect(statSync(file).size).toBe("content".length);
    expect(octal(modeOf(file))).toBe("0600");
  });

  it("ensurePrivateDir tightens the folders from its root down, and nothing above the root", () => {
    const above = parent();
    const root = join(above, "state-dir");
    mkdirSync(join(root, "agents"), { recursive: true, mode: 0o755 });
    chmodSync(root, 0o755);
    chmodSync(join(root, "agents"), 0o755);
    ensurePrivateDir(join(root, "agents", "main"), root);
    expectModes([root, join(root, "agents"), join(root, "agents", "main")], 0o700);
    expect(octal(modeOf(above))).toBe("0755");
  });

  it("ensurePrivateDir with a root the folder is not under tightens only the folder", () => {
    const above = parent();
    const elsewhere = join(above, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o755 });
    chmodSync(elsewhere, 0o755);
    ensurePrivateDir(join(above, "db"), elsewhere);
    expect(octal(modeOf(join(above, "db")))).toBe("0700");
    expect(octal(modeOf(elsewhere))).toBe("0755");
    expect(octal(modeOf(above))).toBe("0755");
  });

  it("tightenFile ignores a missing path and keeps a private one as it is", () => {
    const dir = parent();
    expect(() => tightenFile(join(dir, "missing"))).not.toThrow();
    const file = join(dir, "read-only");
    writeFileSync(file, "");
    chmodSync(file, 0o400);
    tightenFile(file);
    expect(octal(modeOf(file))).toBe("0400");
  });

  it("isPrivateMode is about group and other bits only", () => {
    expect(isPrivateMode(0o100600)).toBe(true);
    expect(isPrivateMode(0o40700)).toBe(true);
    expect(isPrivateMode(0o100644)).toBe(false);
    expect(isPrivateMode(0o40710)).toBe(false);
    expect(isPrivateMode(0o100602)).toBe(false);
  });
});

function walk(dir: string): string[] {
  const found = [dir];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...walk(path));
    else found.push(path);
  }
  return found;
}
