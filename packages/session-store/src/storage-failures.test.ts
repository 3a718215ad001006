// Storage failures on real files: a transcript row damaged outside the store (invalid JSON, or a body that is
// not the entry its row names) is set aside once — reported as a `StorageFailure` naming the file, the session
// and the row — with its bytes left in place, and the session goes on from the last good ancestor; an agent
// database that exists but is empty or not SQLite is refused instead of opened as a new, empty history; and
// the codes SQLite and the file system give are classified in one place.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { agentDatabasePath, controlPlanePath } from "./state-dir.ts";
import { StorageFailure, storageFailureKind, toStorageFailure } from "./storage-errors.ts";
import { openSessionStore } from "./store.ts";
import { header, messageEntry } from "./testing/conformance.ts";
import { clearTranscriptCache } from "./transcript-cache.ts";

const dirs: string[] = [];
async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "storage-failures-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  clearTranscriptCache();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ids = (entries: readonly { id: string }[]) => entries.map((entry) => entry.id);

/** A session `s` with the chain e0 → … → e5 (and a side branch x1 under e1), written and closed. */
async function storeWithChain(dir: string): Promise<void> {
  const store = await openSessionStore({ stateDir: dir });
  const transcript = store.openTranscript("main", "s", { header: header("s") });
  for (let i = 0; i < 6; i++) transcript.append(messageEntry(`e${i}`, i === 0 ? null : `e${i - 1}`));
  transcript.append(messageEntry("x1", "e1"));
  transcript.setLeaf("e5");
  await store.close();
}

/**
 * Writes `body` into entry `id`'s row, as a disk error or a hand edit would; returns the row's seq. The read
 * cache is emptied: the next store reads the file as a new process would.
 */
function damage(dir: string, id: string, body: string): number {
  clearTranscriptCache();
  const db = new Database(agentDatabasePath(dir, "main"));
  try {
    db.prepare("UPDATE transcript_entries SET body = ? WHERE session_id = 's' AND id = ?").run(body, id);
    return db.prepare("SELECT seq FROM transcript_entries WHERE id = ?").pluck().get(id) as number;
  } finally {
    db.close();
  }
}

function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("a damaged transcript row", () => {
  it("is reported once (file, session, row), kept byte for byte, and the branch goes on from its last good ancestor", async () => {
    const dir = await stateDir();
    await storeWithChain(dir);
    const seq = damage(dir, "e3", '{"type":"message","id":"e3",');
    const store = await openSessionStore({ stateDir: dir });
    try {
      const transcript = store.openTranscript("main", "s");
      const failure = caught(() => transcript.getBranch());
      expect(failure).toBeInstanceOf(StorageFailure);
      const storage = failure as StorageFailure;
      expect(storage.kind).toBe("corrupt");
      expect(storage.path).toBe(agentDatabasePath(dir, "main"));
      expect(storage.row).toEqual({ table: "transcript_entries", sessionId: "s", seq, id: "e3" });
      expect(storage.message).toContain(
        `transcript row seq ${seq} (entry e3) of session s in ${storage.path}`,
      );
      expect(storage.message).toContain("is not valid JSON");
      expect(storage.message).toContain("now ends at entry e2");

      // From now on: the branch ends at e2, reads skip e3, and appends go on under e2.
      expect(ids(transcript.getBranch())).toEqual(["e0", "e1", "e2"]);
      expect(transcript.getLeafId()).toBe("e2");
      expect(ids(transcript.getEntries())).toEqual(["e0", "e1", "e2", "e4", "e5", "x1"]);
      expect(transcript.getEntry("e3")).toBeUndefined();
      expect(transcript.count()).toBe(6);
      expect(transcript.quarantined?.()).toEqual([
        expect.objectContaining({
          sessionId: "s",
          seq,
          id: "e3",
          problem: expect.stringContaining("not valid JSON"),
        }),
      ]);
      const next = transcript.appendAtLeaf({
        type: "message",
        id: "n1",
        timestamp: new Date().toISOString(),
      });
      expect(next.parentId).toBe("e2");
      expect(ids(transcript.getBranch())).toEqual(["e0", "e1", "e2", "n1"]);
    } finally {
      await store.close();
    }
    // Nothing was deleted or rewritten: the damaged bytes are still in their row.
    const db = new Database(agentDatabasePath(dir, "main"), { readonly: true });
    expect(db.prepare("SELECT body FROM transcript_entries WHERE seq = ?").pluck().get(seq)).toBe(
      '{"type":"message","id":"e3",',
    );
    db.close();

    // Another process (a cold cache) finds it set aside already: no second report, the same branch.
    clearTranscriptCache();
    const again = await openSessionStore({ stateDir: dir });
    try {
      expect(ids(again.openTranscript("main", "s").getBranch())).toEqual(["e0", "e1", "e2", "n1"]);
    } finally {
      await again.close();
    }
  });

  it("counts a body that is not the entry its row names as damaged, and off the branch leaves the leaf alone", async () => {
    const dir = await stateDir();
    await storeWithChain(dir);
    damage(dir, "x1", JSON.stringify({ type: "message", id: "other", parentId: "e1", timestamp: "t" }));
    const store = await openSessionStore({ stateDir: dir });
    try {
      const transcript = store.openTranscript("main", "s");
      // The active branch does not read x1: nothing to report there.
      expect(ids(transcript.getBranch())).toEqual(["e0", "e1", "e2", "e3", "e4", "e5"]);
      const failure = caught(() => transcript.getEntries()) as StorageFailure;
      expect(failure.kind).toBe("corrupt");
      expect(failure.message).toContain('holds entry id "other", not the row\'s "x1"');
      expect(failure.message).toContain("does not go through it");
      expect(transcript.getLeafId()).toBe("e5");
      expect(ids(transcript.getEntries())).toEqual(["e0", "e1", "e2", "e3", "e4", "e5"]);
    } finally {
      await store.close();
    }
  });

  it("at the root leaves an empty branch: the next entry starts a new root", async () => {
    const dir = await stateDir();
    await storeWithChain(dir);
    damage(dir, "e0", "not json");
    const store = await openSessionStore({ stateDir: dir });
    try {
      const transcript = store.openTranscript("main", "s");
      expect((caught(() => transcript.getBranch()) as StorageFailure).message).toContain("starts over");
      expect(transcript.getBranch()).toEqual([]);
      expect(transcript.getLeafId()).toBeNull();
      expect(transcript.appendAtLeaf({ type: "message", id: "r", timestamp: "t" }).parentId).toBeNull();
    } finally {
      await store.close();
    }
  });
});

describe("an agent database the store did not create", () => {
  it("is refused when it is empty or not SQLite; a missing one is created", async () => {
    const dir = await stateDir();
    const path = agentDatabasePath(dir, "main");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "");
    const store = await openSessionStore({ stateDir: dir });
    try {
      const empty = caught(() =>
        store.openTranscript("main", "s", { header: header("s") }),
      ) as StorageFailure;
      expect(empty).toBeInstanceOf(StorageFailure);
      expect(empty.kind).toBe("corrupt");
      expect(empty.message).toContain(`${path} is empty (0 bytes), and this store did not create it`);
      // Not SQLite: SQLite's own first read refuses it, and the failure classifies as a damaged file.
      writeFileSync(path, "these are my notes, not a database\n".repeat(10));
      const foreign = toStorageFailure(caught(() => store.hasTranscript("main", "s")));
      expect(foreign?.kind).toBe("corrupt");
      expect(foreign?.message).toContain(`${path} is not a SQLite database (SQLITE_NOTADB)`);
      // Another agent's database is missing: created as always.
      expect(store.openTranscript("ops", "s", { header: header("s") }).count()).toBe(0);
    } finally {
      await store.close();
    }
  });
});

describe("a control plane the store did not create", () => {
  it("is refused when it is empty, naming the file and what to do", async () => {
    const dir = await stateDir();
    const path = controlPlanePath(dir);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "");
    const failure = await openSessionStore({ stateDir: dir }).then(
      async (store) => {
        await store.close();
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StorageFailure);
    expect((failure as StorageFailure).message).toContain(`${path} is empty (0 bytes)`);
    expect((failure as StorageFailure).message).toContain("the state dir's sessions and run records afresh");
  });
});

describe("classification", () => {
  it("maps SQLite's and the file system's codes to kinds, and names the file a StoreOpenError names", () => {
    expect(storageFailureKind("SQLITE_FULL")).toBe("disk_full");
    expect(storageFailureKind("ENOSPC")).toBe("disk_full");
    expect(storageFailureKind("SQLITE_IOERR_WRITE")).toBe("disk_full");
    expect(storageFailureKind("SQLITE_READONLY")).toBe("read_only");
    expect(storageFailureKind("SQLITE_READONLY_DBMOVED")).toBe("read_only");
    expect(storageFailureKind("EROFS")).toBe("read_only");
    expect(storageFailureKind("EACCES")).toBe("read_only");
    expect(storageFailureKind("SQLITE_CORRUPT")).toBe("corrupt");
    expect(storageFailureKind("SQLITE_NOTADB")).toBe("corrupt");
    expect(storageFailureKind("SQLITE_CANTOPEN")).toBe("unreadable");
    expect(storageFailureKind("SQLITE_IOERR_READ")).toBe("unreadable");
    expect(storageFailureKind("SQLITE_BUSY")).toBeUndefined();
    expect(storageFailureKind("SQLITE_CONSTRAINT_UNIQUE")).toBeUndefined();

    const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    const wrapped = new Error("session main/s: could not store entry e1 (message)", { cause: full });
    const failure = toStorageFailure(wrapped, "/state/kernel.sqlite");
    expect(failure?.kind).toBe("disk_full");
    expect(failure?.message).toMatch(
      /^the disk holding \/state\/kernel\.sqlite is full \(SQLITE_FULL\): free space/,
    );
    expect(toStorageFailure(new Error("no code"), "/x")).toBeUndefined();
    // Without a known file there is nothing to name: left to the caller.
    expect(toStorageFailure(full)).toBeUndefined();
  });
});
