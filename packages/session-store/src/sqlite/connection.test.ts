import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  BACKGROUND_CHECKPOINT_BYTES,
  BACKGROUND_CHECKPOINT_MAX_AGE_MS,
  BACKGROUND_CHECKPOINT_MS,
  backgroundCheckpointDue,
  openSqliteFile,
  retryWhileBusy,
} from "./connection.ts";

const busy = (code = "SQLITE_BUSY") => Object.assign(new Error("database is locked"), { code });

describe("retryWhileBusy (opening a file another process is switching to WAL)", () => {
  it("retries a step that fails with SQLITE_BUSY until it succeeds", () => {
    let calls = 0;
    retryWhileBusy(5_000, () => {
      calls += 1;
      if (calls < 3) throw busy(calls === 1 ? "SQLITE_BUSY" : "SQLITE_BUSY_RECOVERY");
    });
    expect(calls).toBe(3);
  });

  it("throws any other error at once, and SQLITE_BUSY once the timeout has run out", () => {
    let calls = 0;
    expect(() =>
      retryWhileBusy(5_000, () => {
        calls += 1;
        throw Object.assign(new Error("file is not a database"), { code: "SQLITE_NOTADB" });
      }),
    ).toThrow("file is not a database");
    expect(calls).toBe(1);
    calls = 0;
    expect(() =>
      retryWhileBusy(60, () => {
        calls += 1;
        throw busy();
      }),
    ).toThrow("database is locked");
    expect(calls).toBeGreaterThan(1);
  });
});

describe("the background checkpoint", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** A new database with `bytes` of rows committed (to its WAL), and its file's size right after. */
  function written(bytes: number) {
    const path = join(mkdtempSync(join(tmpdir(), "session-store-checkpoint-")), "db.sqlite");
    const db = openSqliteFile(path);
    db.exec("CREATE TABLE t (body BLOB)");
    const insert = db.prepare("INSERT INTO t (body) VALUES (?)");
    for (let done = 0; done < bytes; done += 64 * 1024) insert.run(Buffer.alloc(64 * 1024, 1));
    return { db, path, size: () => statSync(path).size, before: statSync(path).size };
  }

  it("leaves a small WAL alone for a short process's lifetime (it syncs nothing mid-turn)", async () => {
    const { db, size, before } = written(256 * 1024);
    await sleep(BACKGROUND_CHECKPOINT_MS * 2.5);
    // nothing was copied into the database file: every page is still only in the WAL
    expect(size()).toBe(before);
    db.close();
    // the last close checkpoints it
    expect(size()).toBeGreaterThan(256 * 1024);
  });

  it("copies a WAL past the threshold into the database file, off the commits", async () => {
    const { db, size, before } = written(BACKGROUND_CHECKPOINT_BYTES + 512 * 1024);
    expect(before).toBeLessThan(BACKGROUND_CHECKPOINT_BYTES);
    const deadline = Date.now() + 30_000;
    while (size() === before && Date.now() < deadline) await sleep(100);
    expect(size()).toBeGreaterThan(BACKGROUND_CHECKPOINT_BYTES);
    db.close();
  }, 40_000);

  it("copies a small WAL once it is BACKGROUND_CHECKPOINT_MAX_AGE_MS old (bounds what a power loss can roll back)", async () => {
    const opened = Date.now();
    const { db, size, before } = written(256 * 1024);
    const deadline = Date.now() + 30_000;
    while (size() === before && Date.now() < deadline) await sleep(100);
    expect(size()).toBeGreaterThan(256 * 1024);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(BACKGROUND_CHECKPOINT_MAX_AGE_MS - 200);
    db.close();
  }, 40_000);
});

describe("backgroundCheckpointDue", () => {
  const mib = 1024 * 1024;
  const last = { at: 100_000, walSize: 4 * mib };

  it("is not due for a WAL not written since the last checkpoint, however large or old", () => {
    expect(backgroundCheckpointDue({ size: 64 * mib, mtimeMs: 90_000 }, last, 1_000_000)).toBe(false);
    expect(backgroundCheckpointDue(undefined, last, 1_000_000)).toBe(false);
  });

  it("is not due for a WAL file that stays at its size after a checkpoint, until the time bound", () => {
    // SQLite rewrites the WAL from its start after a checkpoint: the file stays 4 MiB with a few new frames.
    const rewritten = { size: 4 * mib, mtimeMs: 101_000 };
    expect(backgroundCheckpointDue(rewritten, last, 102_000)).toBe(false);
    expect(backgroundCheckpointDue(rewritten, last, 100_000 + BACKGROUND_CHECKPOINT_MAX_AGE_MS)).toBe(true);
  });

  it("is due early when the WAL grew by BACKGROUND_CHECKPOINT_BYTES", () => {
    const grown = { size: 4 * mib + BACKGROUND_CHECKPOINT_BYTES, mtimeMs: 101_000 };
    expect(backgroundCheckpointDue(grown, last, 101_000)).toBe(true);
  });

  it("counts a write in the file system clock's last tick before the checkpoint as new", () => {
    expect(backgroundCheckpointDue({ size: 8192, mtimeMs: 99_990 }, last, 106_000)).toBe(true);
  });
});
