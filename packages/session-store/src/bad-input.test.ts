// Bad input: files that are not SQLite or not ours, a read-only folder, a database from a newer release, bad
// agent ids. Each is a clear error naming the file, and nothing already stored is lost.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SessionStoreError, StoreOpenError, StoreVersionError } from "./errors.ts";
import { LATEST_SCHEMA_VERSION } from "./migrator.ts";
import { agentDatabasePath, controlPlanePath } from "./state-dir.ts";
import { openSessionStore } from "./store.ts";
import { header, messageEntry } from "./testing/conformance.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    chmodTree(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "agent-kernel-bad-"));
  dirs.push(dir);
  return dir;
}

async function seeded(dir: string): Promise<void> {
  const store = await openSessionStore({ stateDir: dir });
  await store.sessions.create({
    agentId: "main",
    sessionKey: "agent:main:main",
    sessionId: "s1",
    meta: { label: "keep me" },
  });
  const transcript = store.openTranscript("main", "s1", { header: header("s1") });
  transcript.append(messageEntry("a", null));
  transcript.append(messageEntry("b", "a"));
  await store.close();
}

async function expectSeededDataIntact(dir: string): Promise<void> {
  const store = await openSessionStore({ stateDir: dir });
  expect((await store.sessions.get({ agentId: "main", sessionKey: "agent:main:main" }))?.meta.label).toBe(
    "keep me",
  );
  expect(
    store
      .openTranscript("main", "s1")
      .getBranch()
      .map((entry) => entry.id),
  ).toEqual(["a", "b"]);
  await store.close();
}

async function openError(dir: string): Promise<unknown> {
  return openSessionStore({ stateDir: dir }).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (error: unknown) => error,
  );
}

describe("a control-plane file that is not a usable database", () => {
  it.each([
    ["plain text", Buffer.from("this is a text file, not a database\n".repeat(20))],
    [
      "a SQLite header followed by garbage",
      Buffer.concat([Buffer.from("SQLite format 3\0"), Buffer.alloc(4080, 0xab)]),
    ],
  ])("refuses %s with an error naming the file, and leaves it untouched", async (_label, bytes) => {
    const dir = stateDir();
    const path = controlPlanePath(dir);
    mkdirSync(join(dir, "state"), { recursive: true });
    writeFileSync(path, bytes);
    const error = await openError(dir);
    expect(error).toBeInstanceOf(StoreOpenError);
    expect(String(error)).toContain(path);
    expect(String(error)).toMatch(/not a SQLite database|corrupt/);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it("refuses a SQLite database that is not a session store, untouched", async () => {
    const dir = stateDir();
    const path = controlPlanePath(dir);
    mkdirSync(join(dir, "state"), { recursive: true });
    const foreign = new Database(path);
    foreign.exec(
      "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5)",
    );
    foreign.close();
    const error = await openError(dir);
    expect(error).toBeInstanceOf(StoreOpenError);
    expect(String(error)).toMatch(/not a session store \(it has tables invoices/);
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual([
      "invoices",
    ]);
    check.close();
  });
});

describe("an agent database that is not a database", () => {
  it("fails that agent's transcripts clearly while the rest of the store keeps working", async () => {
    const dir = stateDir();
    await seeded(dir);
    const broken = agentDatabasePath(dir, "ops");
    mkdirSync(join(dir, "agents", "ops"), { recursive: true });
    writeFileSync(broken, "garbage ".repeat(100));
    const store = await openSessionStore({ stateDir: dir });
    expect(() => store.openTranscript("ops", "s9", { header: header("s9") })).toThrow(StoreOpenError);
    expect(() => store.openTranscript("ops", "s9", { header: header("s9") })).toThrow(broken);
    expect(store.openTranscript("main", "s1").count()).toBe(2);
    await store.close();
    expect(readFileSync(broken, "utf8")).toBe("garbage ".repeat(100));
    await expectSeededDataIntact(dir);
  });

  it("refuses agent ids that are not valid (they name folders)", async () => {
    const store = await openSessionStore({ stateDir: stateDir() });
    for (const bad of ["../escape", "", "a/b", "-dash"]) {
      expect(() => store.openTranscript(bad, "s1", { header: header("s1") })).toThrow(SessionStoreError);
      expect(() => store.openTranscript(bad, "s1", { header: header("s1") })).toThrow(/invalid agent id/);
    }
    await store.close();
  });
});

describe("a read-only state dir", () => {
  /**
   * Runs the open in a child process in a folder that really is read-only to it. Not root: the folder is
   * chmod 555. Root ignores permission bits, so the folder and its files are made immutable (`chattr -R +i`, which binds root
   * too); where the file system has no such flag, the child drops to `nobody` instead (that needs the
   * checkout to be readable by `nobody`, which a root-only temp folder is not — hence chattr first).
   */
  function openAsReadOnlyUser(dir: string): { ok: boolean; name?: string; message?: string } {
    const asRoot = process.getuid?.() === 0;
    const immutable = asRoot && spawnSync("chattr", ["-R", "+i", dir]).status === 0;
    if (!asRoot) chmodTree(dir, 0o555);
    try {
      const child = spawnSync(
        process.execPath,
        [
          "--conditions=@agent-kernel/source",
          join(import.meta.dirname, "..", "test", "child", "open-store.ts"),
          dir,
        ],
        { encoding: "utf8", ...(asRoot && !immutable ? { uid: 65534, gid: 65534 } : {}) },
      );
      expect(child.status, child.stderr).toBe(0);
      return JSON.parse(child.stdout) as { ok: boolean; name?: string; message?: string };
    } finally {
      if (immutable) spawnSync("chattr", ["-R", "-i", dir]);
      chmodTree(dir, 0o755);
    }
  }

  it("fails to create a new store with a clear error", () => {
    const result = openAsReadOnlyUser(stateDir());
    expect(result).toMatchObject({ ok: false, name: "StoreOpenError" });
    expect(result.message).toMatch(/cannot create its folder|read-only|permission denied|cannot be opened/);
  });

  it("fails to open an existing store with a clear error and loses nothing", async () => {
    const dir = stateDir();
    await seeded(dir);
    const result = openAsReadOnlyUser(dir);
    expect(result).toMatchObject({ ok: false, name: "StoreOpenError" });
    expect(result.message).toContain(controlPlanePath(dir));
    expect(result.message).toMatch(/read-only|permission denied|cannot be opened/);
    await expectSeededDataIntact(dir);
  });
});

describe("a database from a newer release", () => {
  it("is refused naming both versions, byte for byte untouched, and readable again once the marker is gone", async () => {
    const dir = stateDir();
    await seeded(dir);
    const path = controlPlanePath(dir);
    const marker = new Database(path);
    marker
      .prepare("INSERT INTO schema_migrations VALUES (?, 'from-the-future', 0)")
      .run(LATEST_SCHEMA_VERSION + 1);
    marker.pragma("wal_checkpoint(TRUNCATE)");
    marker.close();
    const before = readFileSync(path);
    const error = await openError(dir);
    expect(error).toBeInstanceOf(StoreVersionError);
    expect(error).toMatchObject({
      databaseVersion: LATEST_SCHEMA_VERSION + 1,
      supportedVersion: LATEST_SCHEMA_VERSION,
    });
    expect(String(error)).toContain(path);
    expect(readFileSync(path).equals(before)).toBe(true);
    const undo = new Database(path);
    undo.prepare("DELETE FROM schema_migrations WHERE name = 'from-the-future'").run();
    undo.close();
    await expectSeededDataIntact(dir);
  });

  it("is refused for an agent database too, without touching the control plane", async () => {
    const dir = stateDir();
    await seeded(dir);
    const marker = new Database(agentDatabasePath(dir, "main"));
    marker
      .prepare("INSERT INTO schema_migrations VALUES (?, 'from-the-future', 0)")
      .run(LATEST_SCHEMA_VERSION + 3);
    marker.close();
    const store = await openSessionStore({ stateDir: dir });
    expect(() => store.openTranscript("main", "s1")).toThrow(StoreVersionError);
    expect(() => store.openTranscript("main", "s1")).toThrow(`schema version ${LATEST_SCHEMA_VERSION + 3}`);
    expect((await store.sessions.get({ agentId: "main", sessionKey: "agent:main:main" }))?.sessionId).toBe(
      "s1",
    );
    await store.close();
  });
});

function chmodTree(dir: string, mode: number): void {
  try {
    chmodSync(dir, mode);
    for (const sub of ["state", "agents", join("agents", "main")]) chmodSync(join(dir, sub), mode);
  } catch {
    // A folder that does not exist yet needs no mode.
  }
}
