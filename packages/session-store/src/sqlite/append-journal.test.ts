// The append journal: an append is durable in the journal when it returns and in SQLite after its burst; a
// process killed before folding loses nothing (the next open replays its journal); replays report what they
// could not store; a live owner's journal is left alone; a journal that cannot be written falls back to commits.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TranscriptConflictError } from "../errors.ts";
import { agentDatabasePath } from "../state-dir.ts";
import { openSessionStore } from "../store.ts";
import { header, messageEntry } from "../testing/conformance.ts";
import { type TranscriptEntry, TranscriptStatements } from "../transcript.ts";
import { AppendJournal, FOLD_AT_ENTRIES, linePrefixFor, listJournals } from "./append-journal.ts";

const CHILD = join(import.meta.dirname, "..", "..", "test", "child", "append-then-hang.ts");
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "append-journal-"));
  dirs.push(dir);
  return dir;
}

/** Rows of a session as another connection sees them (no store, no cache). */
function storedIds(dir: string, sessionId: string): string[] {
  const db = new Database(agentDatabasePath(dir, "main"), { readonly: true });
  try {
    return db
      .prepare("SELECT id FROM transcript_entries WHERE session_id = ? ORDER BY seq")
      .pluck()
      .all(sessionId) as string[];
  } finally {
    db.close();
  }
}

/** A pid that belonged to a process which has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  return child.pid ?? 999_999;
}

function journalLine(sessionId: string, entry: object): string {
  return `${linePrefixFor(sessionId)}${JSON.stringify(entry)}}\n`;
}

/** A marker line as an owner writes it: it knew the session's rows up to `seq`, now. */
function markerLine(seq: number): string {
  return `${JSON.stringify({ m: seq, t: new Date().toISOString() })}\n`;
}

/** Where a journal of `main`'s database owned by this host, `pid` and `token` lives. */
function journalOf(dir: string, pid: number, token: string): string {
  const name = `agent.sqlite-appends+${encodeURIComponent(hostname())}+${pid}+${token}.jsonl`;
  return join(dirname(agentDatabasePath(dir, "main")), name);
}

/** Commits an entry through a connection of its own, as another process would (no store, no journal). */
function storeAsAnotherProcess(dir: string, sessionId: string, entry: TranscriptEntry): void {
  const db = new Database(agentDatabasePath(dir, "main"));
  try {
    db.prepare(
      "INSERT INTO transcript_entries (session_id, id, parent_id, type, timestamp, body) VALUES (?, ?, ?, ?, ?, ?)",
    ).run(sessionId, entry.id, entry.parentId, entry.type, entry.timestamp, JSON.stringify(entry));
  } finally {
    db.close();
  }
}

describe("the append journal", () => {
  it("makes an append durable in the journal at once and stores it in SQLite in the group commit after the event-loop turn", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "s1", { header: header("s1") });
    transcript.append(messageEntry("a", null));
    transcript.append(messageEntry("b", "a"));
    const [journal] = listJournals(agentDatabasePath(dir, "main"));
    expect(journal?.owner).toMatchObject({ host: hostname(), pid: process.pid });
    // A marker (what the owner knew of the session: no rows yet), then one line per entry.
    expect(
      readFileSync(journal?.path ?? "", "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { m?: number; e?: { id: string } })
        .map((record) => record.e?.id ?? `marker ${record.m}`),
    ).toEqual(["marker 0", "a", "b"]);
    // Not yet in SQLite for another connection, but every read through this process sees it; the group
    // commit comes after the current event-loop turn (not within its promise chain).
    expect(storedIds(dir, "s1")).toEqual([]);
    await Promise.resolve();
    expect(storedIds(dir, "s1")).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(storedIds(dir, "s1")).toEqual(["a", "b"]);
    transcript.append(messageEntry("c", "b"));
    expect(transcript.getLeafId()).toBe("c");
    expect(storedIds(dir, "s1")).toEqual(["a", "b", "c"]);
    await store.close();
    expect(listJournals(agentDatabasePath(dir, "main"))).toEqual([]);
  });

  it("a session's count and leaf fold only when that session has appends pending (not another session's)", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const s1 = store.openTranscript("main", "s1", { header: header("s1") });
    const s2 = store.openTranscript("main", "s2", { header: header("s2") });
    s1.append(messageEntry("a", null));
    await store.flush();
    s2.append(messageEntry("x", null));
    // s1 has nothing pending: its count and leaf read SQLite as it is, s2's append stays in the journal.
    expect(s1.count()).toBe(1);
    expect(s1.getLeafId()).toBe("a");
    expect(storedIds(dir, "s2")).toEqual([]);
    // s1 with an append pending: folded first (every pending append of the database, in order).
    s1.append(messageEntry("b", "a"));
    expect(s1.count()).toBe(2);
    expect(storedIds(dir, "s1")).toEqual(["a", "b"]);
    expect(storedIds(dir, "s2")).toEqual(["x"]);
    // s2 reads its own pending append too.
    s2.append(messageEntry("y", "x"));
    expect(s2.getLeafId()).toBe("y");
    expect(s2.count()).toBe(2);
    await store.close();
  });

  it('commits every append at once with appends: "commit"', async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir, appends: "commit" });
    store.openTranscript("main", "s1", { header: header("s1") }).append(messageEntry("a", null));
    expect(storedIds(dir, "s1")).toEqual(["a"]);
    expect(listJournals(agentDatabasePath(dir, "main"))).toEqual([]);
    await store.close();
  });

  it("folds a long burst every FOLD_AT_ENTRIES entries without waiting for its end", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "s1", { header: header("s1") });
    for (let index = 0; index <= FOLD_AT_ENTRIES; index++) {
      transcript.append(messageEntry(`e${index}`, index === 0 ? null : `e${index - 1}`));
    }
    expect(storedIds(dir, "s1")).toHaveLength(FOLD_AT_ENTRIES);
    await store.flush();
    expect(storedIds(dir, "s1")).toHaveLength(FOLD_AT_ENTRIES + 1);
    await store.close();
  });

  for (const count of [300, FOLD_AT_ENTRIES + 188]) {
    it(`loses nothing when the process is killed before folding (${count} entries)`, async () => {
      const dir = stateDir();
      const child = spawn(
        process.execPath,
        ["--conditions=@agent-kernel/source", CHILD, dir, String(count)],
        {
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("appended")) resolve();
        });
        child.on("close", () => reject(new Error(`the child stopped before appending: ${stderr}`)));
      });
      const folded = count >= FOLD_AT_ENTRIES ? FOLD_AT_ENTRIES : 0;
      expect(storedIds(dir, "s1")).toHaveLength(folded);
      child.kill("SIGKILL");
      await new Promise((resolve) => child.on("close", resolve));

      const store = await openSessionStore({ stateDir: dir });
      try {
        const branch = store.openTranscript("main", "s1").getBranch();
        expect(branch.map((entry) => entry.id)).toEqual(
          Array.from({ length: count }, (_unused, index) => `entry-${index}`),
        );
        // A fold empties the file down to a marker: only what was not folded is replayed.
        expect(store.recoveredAppends).toEqual([
          expect.objectContaining({ stored: count - folded, alreadyStored: 0, problems: [] }),
        ]);
        // The dead child's journal is gone (this store has appended nothing, so it has none yet).
        expect(listJournals(agentDatabasePath(dir, "main"))).toEqual([]);
      } finally {
        await store.close();
      }
    });
  }

  it("folds and removes its journal when the process exits without closing the store", async () => {
    const dir = stateDir();
    const child = spawnSync(
      process.execPath,
      ["--conditions=@agent-kernel/source", CHILD, dir, "300", "exit"],
      { encoding: "utf8" },
    );
    expect(child.stdout, child.stderr).toBe("appended\n");
    expect(storedIds(dir, "s1")).toHaveLength(300);
    expect(listJournals(agentDatabasePath(dir, "main"))).toEqual([]);
  });

  it("replays a gone owner's journal line by line, reporting the lines it cannot store", async () => {
    const dir = stateDir();
    const setup = await openSessionStore({ stateDir: dir, appends: "commit" });
    const stored = setup.openTranscript("main", "s1", { header: header("s1") });
    stored.append(messageEntry("root", null));
    stored.append(messageEntry("taken", "root", "what was stored"));
    await setup.close();
    const path = journalOf(dir, deadPid(), "gone");
    writeFileSync(
      path,
      [
        // The owner last folded when `root` (seq 1) was the highest row; `taken` came after.
        markerLine(1),
        journalLine("s1", messageEntry("a", "root")),
        journalLine("s1", messageEntry("taken", "root", "something else")),
        journalLine("s1", messageEntry("orphan", "nowhere")),
        "not json\n",
        journalLine("s1", messageEntry("root", null)),
        journalLine("s1", messageEntry("b", "a")),
        '{"s":"s1","e":{"type":"message","id":"torn',
      ].join(""),
    );
    const store = await openSessionStore({ stateDir: dir });
    try {
      const transcript = store.openTranscript("main", "s1");
      // Another writer went on after the owner's last fold (taken, seq 2 > 1): the leaf stays there.
      expect(transcript.getBranch().map((entry) => entry.id)).toEqual(["root", "taken"]);
      expect(transcript.getBranch("b").map((entry) => entry.id)).toEqual(["root", "a", "b"]);
      expect(transcript.getEntry("taken")).toEqual(messageEntry("taken", "root", "what was stored"));
      const [replay] = store.recoveredAppends;
      expect(replay).toMatchObject({ file: path, stored: 2, alreadyStored: 1 });
      expect(replay?.problems.map((problem) => problem.line)).toEqual([3, 4, 5, 8]);
      expect(replay?.problems[0]?.problem).toMatch(/taken already exists .* different content/);
      expect(replay?.problems[1]?.problem).toMatch(/parent nowhere does not exist/);
      expect(replay?.problems[2]?.problem).toMatch(/not a complete JSON line/);
      expect(existsSync(path)).toBe(false);
    } finally {
      await store.close();
    }
  });

  it("leaves the journal of a live owner alone", async () => {
    const dir = stateDir();
    const setup = await openSessionStore({ stateDir: dir });
    setup.openTranscript("main", "s1", { header: header("s1") });
    await setup.close();
    // The parent process (the test runner) is alive: its journal is its own to fold.
    const path = journalOf(dir, process.ppid, "live");
    writeFileSync(path, journalLine("s1", messageEntry("a", null)));
    const store = await openSessionStore({ stateDir: dir });
    try {
      expect(store.openTranscript("main", "s1").count()).toBe(0);
      expect(store.recoveredAppends).toEqual([]);
      expect(existsSync(path)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("reports an entry refused at the fold (another process stored that id first) once, on the next call", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "s1", { header: header("s1") });
    transcript.append(messageEntry("a", null));
    await store.flush();
    transcript.append(messageEntry("x", "a", "mine"));
    transcript.append(messageEntry("y", "a", "mine too"));
    storeAsAnotherProcess(dir, "s1", messageEntry("x", "a", "theirs"));
    expect(() => transcript.getBranch()).toThrow(TranscriptConflictError);
    expect(() => transcript.getBranch()).not.toThrow();
    expect(transcript.getEntry("x")).toEqual(messageEntry("x", "a", "theirs"));
    expect(transcript.getEntry("y")).toEqual(messageEntry("y", "a", "mine too"));
    await store.close();
  });

  it("proves the cache current again at the next burst: an id another process stored meanwhile throws at once", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "s1", { header: header("s1") });
    transcript.append(messageEntry("a", null));
    await Promise.resolve();
    storeAsAnotherProcess(dir, "s1", messageEntry("x", "a", "theirs"));
    expect(() => transcript.append(messageEntry("x", "a", "mine"))).toThrow(TranscriptConflictError);
    // An identical repeat is a no-op that moves the leaf, as ever.
    transcript.append(messageEntry("x", "a", "theirs"));
    expect(transcript.getLeafId()).toBe("x");
    await store.close();
  });

  it("a refusal in a long burst is reported, and the refused entry's journaled descendants are refused with it", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "s1", { header: header("s1") });
    transcript.append(messageEntry("a", null));
    await store.flush();
    transcript.append(messageEntry("x", "a", "mine"));
    storeAsAnotherProcess(dir, "s1", messageEntry("x", "a", "theirs"));
    // Longer than one fold: the fold at FOLD_AT_ENTRIES runs inside an append and must not lose the refusal,
    // which the first append that cannot be journaled after it (its parent was refused) reports.
    let thrown: unknown;
    for (let index = 1; index < FOLD_AT_ENTRIES + 100 && thrown === undefined; index++) {
      try {
        transcript.append(messageEntry(`c${index}`, index === 1 ? "x" : `c${index - 1}`));
      } catch (error) {
        thrown = error;
      }
    }
    expect(thrown).toBeInstanceOf(TranscriptConflictError);
    expect(String(thrown)).toMatch(
      /x already exists .* different content; entry c1 .* parent x was refused.*more/,
    );
    expect(transcript.getChildren("x")).toEqual([]);
    expect(transcript.count()).toBe(2);
    await store.close();
  });

  it("after a refusal, the session's next append reports it instead of journaling a child of the refused entry", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const mine = store.openTranscript("main", "s1", { header: header("s1") });
    const other = store.openTranscript("main", "s2", { header: header("s2") });
    mine.append(messageEntry("a", null));
    other.append(messageEntry("o", null));
    await store.flush();
    mine.append(messageEntry("x", "a", "mine"));
    storeAsAnotherProcess(dir, "s1", messageEntry("x", "a", "theirs"));
    await new Promise((resolve) => setImmediate(resolve));
    // Another session's calls neither see nor use up s1's refusal.
    expect(other.getEntries().map((entry) => entry.id)).toEqual(["o"]);
    other.append(messageEntry("o", null));
    expect(() => mine.append(messageEntry("c1", "x"))).toThrow(/x already exists .* different content/);
    expect(storedIds(dir, "s1")).toEqual(["a", "x"]);
    await store.close();
  });

  it("keeps a session's order when two stores of one process append to it in turn", async () => {
    const dir = stateDir();
    const first = await openSessionStore({ stateDir: dir });
    const second = await openSessionStore({ stateDir: dir });
    try {
      const one = first.openTranscript("main", "s1", { header: header("s1") });
      const two = second.openTranscript("main", "s1");
      two.append(messageEntry("a", null));
      one.append(messageEntry("b", "a"));
      two.append(messageEntry("c", "b"));
      expect(one.getEntries().map((entry) => entry.id)).toEqual(["a", "b", "c"]);
      expect(two.getLeafId()).toBe("c");
      expect(storedIds(dir, "s1")).toEqual(["a", "b", "c"]);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("a replay leaves the leaf alone when the session went on without the dead process's entries", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "s1", { header: header("s1") });
    transcript.append(messageEntry("r", null));
    transcript.append(messageEntry("b1", "r"));
    await store.close();
    const path = journalOf(dir, deadPid(), "gone");
    // The owner last folded when `r` (seq 1) was the highest row; b1 came after it.
    writeFileSync(
      path,
      `${markerLine(1)}${journalLine("s1", messageEntry("e1", "r"))}${journalLine("s1", messageEntry("e2", "e1"))}`,
    );
    const reopened = await openSessionStore({ stateDir: dir });
    try {
      const replayed = reopened.openTranscript("main", "s1");
      expect(reopened.recoveredAppends).toMatchObject([{ stored: 2 }]);
      expect(replayed.getLeafId()).toBe("b1");
      expect(replayed.getBranch("e2").map((entry) => entry.id)).toEqual(["r", "e1", "e2"]);
    } finally {
      await reopened.close();
    }
  });

  it("a replay moves the leaf to the owner's last entry when nobody went on, even off the old leaf's branch", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir, appends: "commit" });
    const transcript = store.openTranscript("main", "s1", { header: header("s1") });
    transcript.append(messageEntry("r", null));
    transcript.append(messageEntry("a", "r"));
    transcript.append(messageEntry("b", "a"));
    await store.close();
    // What pi's branchWithSummary leaves: a summary whose parent is not the leaf, then a message under it.
    const summary = { type: "branch_summary", id: "s", parentId: "a", timestamp: "t", summary: "tried b" };
    writeFileSync(
      journalOf(dir, deadPid(), "gone"),
      `${markerLine(3)}${journalLine("s1", summary)}${journalLine("s1", messageEntry("m", "s"))}`,
    );
    const reopened = await openSessionStore({ stateDir: dir });
    try {
      expect(reopened.openTranscript("main", "s1").getLeafId()).toBe("m");
      expect(reopened.recoveredAppends).toMatchObject([{ stored: 2, problems: [] }]);
    } finally {
      await reopened.close();
    }
  });

  it("marks the journal past its owner's own direct writes, so a replay does not take them for another writer's", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "s1", { header: header("s1") });
    transcript.append(messageEntry("r", null));
    await store.flush();
    // appendAtLeaf and setLeaf commit directly (in the same synchronous burst as the appends around them).
    transcript.append(messageEntry("a", "r"));
    transcript.appendAtLeaf({ type: "message", id: "x", timestamp: "t" });
    transcript.setLeaf("r");
    transcript.append(messageEntry("y", "r"));
    const [journal] = listJournals(agentDatabasePath(dir, "main"));
    const records = readFileSync(journal?.path ?? "", "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { m?: number; t?: string; e?: { id: string } });
    const beforeY = records[records.findIndex((record) => record.e?.id === "y") - 1];
    // y's line follows a marker that knows a and x (seqs 2 and 3) and comes after the leaf move.
    expect(beforeY?.m).toBe(3);
    const db = new Database(agentDatabasePath(dir, "main"), { readonly: true });
    try {
      const movedAt = db.prepare("SELECT updated_at FROM transcripts WHERE session_id = 's1'").pluck().get();
      expect((beforeY?.t ?? "") >= String(movedAt)).toBe(true);
    } finally {
      db.close();
    }
    await store.close();
  });

  it("marks what the owner saw of other writers' rows, so a replay follows its entries under them", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "s1", { header: header("s1") });
    transcript.append(messageEntry("r", null));
    await store.flush();
    storeAsAnotherProcess(dir, "s1", messageEntry("x", "r"));
    expect(transcript.getLeafId()).toBe("x");
    transcript.append(messageEntry("y", "x"));
    const [journal] = listJournals(agentDatabasePath(dir, "main"));
    const [marker] = readFileSync(journal?.path ?? "", "utf8")
      .split("\n")
      .map((line) => (line === "" ? {} : (JSON.parse(line) as { m?: number })));
    expect(marker?.m).toBe(2);
    await store.close();
  });

  it("a refusal found by another store's fold goes to the next call on that session through any store", async () => {
    const dir = stateDir();
    const first = await openSessionStore({ stateDir: dir });
    const second = await openSessionStore({ stateDir: dir });
    try {
      const mine = first.openTranscript("main", "s1", { header: header("s1") });
      mine.append(messageEntry("a", null));
      await first.flush();
      mine.append(messageEntry("x", "a", "mine"));
      storeAsAnotherProcess(dir, "s1", messageEntry("x", "a", "theirs"));
      const viaSecond = second.openTranscript("main", "s1");
      expect(() => viaSecond.append(messageEntry("c1", "x"))).toThrow(
        /x already exists .* different content/,
      );
      expect(storedIds(dir, "s1")).toEqual(["a", "x"]);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("an open store replays a journal left by a process that died while it was open, within seconds", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    try {
      const transcript = store.openTranscript("main", "s1", { header: header("s1") });
      transcript.append(messageEntry("r", null));
      expect(transcript.getLeafId()).toBe("r");
      const path = journalOf(dir, deadPid(), "gone");
      writeFileSync(path, journalLine("s1", messageEntry("e1", "r")));
      await vi.waitFor(() => expect(transcript.getLeafId()).toBe("e1"), { timeout: 8000, interval: 200 });
      expect(store.recoveredAppends).toMatchObject([{ file: path, stored: 1 }]);
      expect(existsSync(path)).toBe(false);
    } finally {
      await store.close();
    }
  });

  it("a journal another process replayed first is skipped", async () => {
    const dir = stateDir();
    const store = await openSessionStore({ stateDir: dir });
    store.openTranscript("main", "s1", { header: header("s1") });
    await store.close();
    const path = agentDatabasePath(dir, "main");
    const db = new Database(path);
    try {
      const statements = new TranscriptStatements(db, path);
      const owner = { host: hostname(), pid: deadPid(), token: "gone" };
      expect(statements.replayJournal({ path: join(dir, "no-such-journal.jsonl"), owner })).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it("cannot be written in a missing folder: write says so and the store would commit instead", () => {
    const missing = join(stateDir(), "no", "such", "agent.sqlite");
    let folds = 0;
    const journal = new AppendJournal(missing, { host: hostname(), pid: process.pid, token: "t" }, () => {
      folds++;
    });
    const entry = messageEntry("a", null);
    expect(
      journal.write(
        { sessionId: "s1", cacheKey: "k", entry, body: JSON.stringify(entry) },
        linePrefixFor("s1"),
      ),
    ).toBe(false);
    expect(journal.pending).toEqual([]);
    expect(folds).toBe(0);
  });
});
