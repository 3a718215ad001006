import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  BACKGROUND_CHECKPOINT_BYTES,
  BACKGROUND_CHECKPOINT_MS,
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

  it("leaves a WAL under SQLite's own threshold alone (a short process syncs nothing mid-turn)", async () => {
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
});
