// Event data serialised once (RunEventJson, run-journal.ts `runJournalLine`): a journal line embeds an event's
// data as the JSON it is (not a string of it), older lines that carry it as a string are still read, data
// given as JSON text is stored as that text on every path (journaled, direct, Kysely), and a replayed line
// whose text differs from the stored one only in escapes is the same event, not a refusal.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyConflictError } from "../errors.ts";
import { RunEventJson } from "../runs.ts";
import { controlPlanePath } from "../state-dir.ts";
import { openSessionStore, type SqliteSessionStore } from "../store.ts";
import {
  listRunJournals,
  type RunOp,
  RunOpStatements,
  readRunJournal,
  runJournalLine,
} from "./run-journal.ts";
import { UPDATE_COLUMNS } from "./run-rows.ts";

const dirs: string[] = [];
const stores: SqliteSessionStore[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "run-journal-lines-"));
  dirs.push(dir);
  return dir;
}

async function open(
  dir: string,
  options: { controlPlaneQueries?: "kysely" } = {},
): Promise<SqliteSessionStore> {
  const store = await openSessionStore({ stateDir: dir, ...options });
  stores.push(store);
  return store;
}

const ref = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" };
const nextImmediate = () => new Promise((resolve) => setImmediate(resolve));
/** Decisions-like data with two-byte text, and the same value as ASCII JSON. */
const value = { phase: "prepared", toolPolicy: ['exec: blocked — deny "exec"', "read…"], n: [1, 2.5] };
const asciiText = JSON.stringify(value).replace(
  /[\u0080-\uffff]/g,
  (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
);

function storedData(dir: string, runId: string): string[] {
  const db = new Database(controlPlanePath(dir), { readonly: true });
  try {
    return db
      .prepare("SELECT data FROM run_events WHERE run_id = ? ORDER BY seq")
      .pluck()
      .all(runId) as string[];
  } finally {
    db.close();
  }
}

describe("event data in run journal lines", () => {
  it("embeds the data as JSON (no string of it) and reads it back as the same text", () => {
    const data = JSON.stringify({ quote: 'say "hi"\n', dash: "—", big: 1e21, nested: [{ a: null }] });
    const op: RunOp = {
      o: "finish",
      id: "r1",
      v: [null, "m", null, null, null, null, null],
      s: "succeeded",
      at: 5,
      r: null,
      m: null,
      e: [{ seq: 0, ts: 4, stream: "lifecycle", data }],
    };
    const line = runJournalLine(op);
    expect(line.endsWith("\n")).toBe(true);
    expect(line).toContain(`"d":${data}`);
    expect(line).not.toContain('\\"quote\\"');
    const dir = stateDir();
    const path = join(dir, "journal.jsonl");
    // An older line (the data as a string) and a new one are both read, with the data's text.
    const older = `${JSON.stringify({ ...op, id: "r0" })}\n`;
    writeFileSync(path, older + line);
    const read = readRunJournal(path);
    expect(read.problems).toEqual([]);
    expect(read.ops.map(({ op: readOp }) => readOp)).toEqual([{ ...op, id: "r0" }, op]);
  });

  it("reports a line whose event has no data as not a run write", () => {
    const dir = stateDir();
    const path = join(dir, "journal.jsonl");
    writeFileSync(
      path,
      `${JSON.stringify({ o: "events", id: "r1", e: [{ seq: 1, ts: 1, stream: "x" }] })}\n`,
    );
    expect(readRunJournal(path)).toMatchObject({ ops: [], problems: [{ line: 1 }] });
  });

  it("stores data given as JSON text as that text: journaled, direct and through Kysely", async () => {
    const dir = stateDir();
    const store = await open(dir);
    await store.runs.start({ ...ref, runId: "journaled", entryPoint: "agent" });
    await store.runs.finish("journaled", {
      status: "succeeded",
      events: [{ seq: 0, ts: 1, stream: "lifecycle", data: new RunEventJson(asciiText) }],
    });
    const [journal] = listRunJournals(controlPlanePath(dir));
    // The line holds the ASCII text as it was given (one-byte, not escaped again).
    expect(readFileSync(journal?.path ?? "", "utf8")).toContain(`"d":${asciiText}`);
    await nextImmediate();
    expect(storedData(dir, "journaled")).toEqual([asciiText]);
    expect((await store.runs.events("journaled"))[0]?.data).toEqual(value);
    // The same event again is the same event; other data under its seq is refused.
    await store.runs.appendEvents("journaled", [
      { seq: 0, ts: 1, stream: "lifecycle", data: new RunEventJson(asciiText) },
    ]);
    await expect(
      store.runs.appendEvents("journaled", [{ seq: 0, ts: 1, stream: "lifecycle", data: { other: true } }]),
    ).rejects.toBeInstanceOf(IdempotencyConflictError);

    // A run this store did not start (another store did) is written directly.
    const other = await open(dir);
    await other.runs.start({ ...ref, runId: "direct", entryPoint: "agent" });
    await other.flush();
    await store.runs.appendEvents("direct", [
      { seq: 0, ts: 1, stream: "lifecycle", data: new RunEventJson(asciiText) },
    ]);
    expect(storedData(dir, "direct")).toEqual([asciiText]);
    // The same value written the other way (two-byte text) is the same event, not a conflict.
    await store.runs.appendEvents("direct", [{ seq: 0, ts: 1, stream: "lifecycle", data: value }]);

    const kyselyDir = stateDir();
    const kysely = await open(kyselyDir, { controlPlaneQueries: "kysely" });
    await kysely.runs.start({ ...ref, runId: "k1", entryPoint: "agent" });
    await kysely.runs.appendEvents("k1", [
      { seq: 0, ts: 1, stream: "lifecycle", data: new RunEventJson(asciiText) },
    ]);
    await kysely.runs.appendEvents("k1", [{ seq: 0, ts: 1, stream: "lifecycle", data: value }]);
    expect(storedData(kyselyDir, "k1")).toEqual([asciiText]);
    expect((await kysely.runs.events("k1"))[0]?.data).toEqual(value);
  });

  it("serialises as its value wherever the event itself is serialised", () => {
    expect(JSON.stringify({ data: new RunEventJson(asciiText) })).toBe(JSON.stringify({ data: value }));
  });

  it("a replayed line whose data differs from the stored text only in escapes is no refusal", async () => {
    const dir = stateDir();
    const store = await open(dir);
    await store.runs.start({ ...ref, runId: "r1", entryPoint: "agent" });
    await store.runs.finish("r1", {
      status: "succeeded",
      events: [{ seq: 0, ts: 1, stream: "lifecycle", data: new RunEventJson(asciiText) }],
    });
    await nextImmediate();
    // What a reader replaying the (already folded) line applies: the data re-serialised from the line.
    const db = new Database(controlPlanePath(dir));
    try {
      const statements = new RunOpStatements(db, UPDATE_COLUMNS);
      const replayed = { seq: 0, ts: 1, stream: "lifecycle", data: JSON.stringify(value) };
      expect(replayed.data).not.toBe(asciiText);
      expect(statements.apply({ o: "events", id: "r1", e: [replayed] })).toBeUndefined();
      expect(
        statements.apply({ o: "events", id: "r1", e: [{ ...replayed, data: '{"other":true}' }] }),
      ).toMatch(/already has a different event with seq 0/);
    } finally {
      db.close();
    }
    expect(storedData(dir, "r1")).toEqual([asciiText]);
  });

  it("keeps a pretty-printed text to one journal line, and refuses a text that is not one JSON value", async () => {
    const pretty = JSON.stringify(value, null, 2);
    expect(pretty).toContain("\n");
    expect(new RunEventJson(pretty).json).toBe(JSON.stringify(value));
    expect(new RunEventJson(asciiText).json).toBe(asciiText);
    for (const bad of ['{"a":1', '1},{"seq":9,"ts":1,"stream":"x","d":2', ""]) {
      expect(() => new RunEventJson(bad)).toThrow(/RunEventJson: not the text of one JSON value/);
    }
    const dir = stateDir();
    const store = await open(dir);
    await store.runs.start({ ...ref, runId: "pretty", entryPoint: "agent" });
    await store.runs.appendEvents("pretty", [
      { seq: 0, ts: 1, stream: "lifecycle", data: new RunEventJson(pretty) },
    ]);
    // The journal, as a crash before the fold would leave it for the next opener, reads whole.
    const [journal] = listRunJournals(controlPlanePath(dir));
    const read = readRunJournal(journal?.path ?? "");
    expect(read.problems).toEqual([]);
    expect(read.ops.map(({ op }) => op.o)).toEqual(["start", "events"]);
    await nextImmediate();
    expect((await store.runs.events("pretty"))[0]?.data).toEqual(value);
  });
});
