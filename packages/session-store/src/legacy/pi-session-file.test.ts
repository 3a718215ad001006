import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildSessionContext,
  type FileEntry,
  migrateSessionEntries,
  type SessionEntry,
  SessionManager,
} from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { parsePiSessionText } from "./pi-session-file.ts";

const fixtures = join(import.meta.dirname, "../../fixtures/legacy");
const scratch = mkdtempSync(join(tmpdir(), "pi-session-file-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function parseFixture(name: string) {
  const file = join(fixtures, name);
  const parsed = parsePiSessionText(readFileSync(file, "utf8"), file);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.session;
}

/** pi's own reading of a file; on a copy, because pi rewrites a v1/v2 file when it migrates it. */
function piContext(name: string) {
  const copy = join(scratch, name.replaceAll("/", "-"));
  copyFileSync(join(fixtures, name), copy);
  return SessionManager.open(copy, scratch).buildSessionContext();
}

describe("parsePiSessionText", () => {
  it.each(["large-session.jsonl", "before-compaction.jsonl"])(
    "migrates the real v1 file %s like pi",
    (name) => {
      const session = parsePiSessionText(readFileSync(join(fixtures, name), "utf8"), name);
      expect(session.ok).toBe(true);
      if (!session.ok) return;
      expect(session.session.formatVersion).toBe(1);
      expect(session.session.header.version).toBe(3);
      expect(session.session.skipped).toEqual([]);
      expect(session.session.repaired).toEqual([]);
      const entries = session.session.entries as unknown as SessionEntry[];
      const context = buildSessionContext(entries, entries.at(-1)?.id ?? null);
      expect(context).toEqual(piContext(name));
      expect(context.messages.length).toBeGreaterThan(100);
    },
  );

  it("turns compaction indexes into the ids of the same entries pi picks", () => {
    const name = "before-compaction.jsonl";
    const ours = parseFixture(name).entries;
    const theirs = readFileSync(join(fixtures, name), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as FileEntry);
    migrateSessionEntries(theirs);
    const piEntries = theirs.filter((entry): entry is SessionEntry => entry.type !== "session");
    const kept = (
      entries: readonly { type: string; firstKeptEntryId?: unknown }[],
      all: readonly { id: string }[],
    ) =>
      entries
        .filter((entry) => entry.type === "compaction")
        .map((entry) => all.findIndex((candidate) => candidate.id === entry.firstKeptEntryId));
    const ourCompactions = kept(ours as never, ours);
    expect(ourCompactions).toHaveLength(2);
    expect(ourCompactions.every((index) => index >= 0)).toBe(true);
    expect(ourCompactions).toEqual(kept(piEntries as never, piEntries));
  });

  it("gives v1 entries the same ids on every parse (so a second import is a no-op)", () => {
    const first = parseFixture("large-session.jsonl").entries.map((entry) => [entry.id, entry.parentId]);
    const second = parseFixture("large-session.jsonl").entries.map((entry) => [entry.id, entry.parentId]);
    expect(second).toEqual(first);
    expect(new Set(first.map(([id]) => id)).size).toBe(first.length);
  });

  it("renames the v2 hookMessage role to custom, as pi's v3 migration does", () => {
    const session = parseFixture("pi-v2/hook-session.jsonl");
    expect(session.formatVersion).toBe(2);
    const roles = session.entries.map((entry) => (entry.message as { role: string }).role);
    expect(roles).toEqual(["user", "custom", "assistant"]);
    const entries = session.entries as unknown as SessionEntry[];
    expect(buildSessionContext(entries)).toEqual(piContext("pi-v2/hook-session.jsonl"));
  });

  it("reports every malformed line with its number and keeps the rest", () => {
    const file = join(fixtures, "openclaw-agent/5d2e8f10-3c4b-4a7d-8e9f-0a1b2c3d4e5f.jsonl");
    const parsed = parsePiSessionText(readFileSync(file, "utf8"), file);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.session.skipped.map((note) => [note.file, note.line])).toEqual([
      [file, 4],
      [file, 6],
    ]);
    expect(parsed.session.skipped[0]?.reason).toMatch(/malformed JSON/);
    expect(parsed.session.entries.map((entry) => entry.id)).toEqual([
      "b0000001",
      "b0000002",
      "b0000004",
      "b0000005",
    ]);
  });

  it("reports a broken tree entry by entry: non-objects, missing ids, reused ids, orphans", () => {
    const session = parseFixture("malformed/broken-tree.jsonl");
    expect(session.skipped.map((note) => [note.line, note.reason])).toEqual([
      [4, "not a JSON object"],
      [5, "message entry without an id"],
      [6, expect.stringMatching(/d0000002 is already used by an earlier line with other content/)],
    ]);
    expect(session.repaired.map((note) => [note.line, note.reason])).toEqual([
      [7, expect.stringMatching(/parent ffffffff is not an earlier entry/)],
    ]);
    expect(session.entries.map((entry) => [entry.id, entry.parentId])).toEqual([
      ["d0000001", null],
      ["d0000002", "d0000001"],
      ["d0000004", null],
      ["d0000005", "d0000004"],
    ]);
    // pi's branch from the last entry stops at the missing parent too: the stored root gives the same context.
    const entries = session.entries as unknown as SessionEntry[];
    expect(buildSessionContext(entries).messages).toEqual(piContext("malformed/broken-tree.jsonl").messages);
  });

  it.each([
    ["malformed/no-header.jsonl", /not a pi session file: line 1 is not a session header/],
    ["malformed/empty.jsonl", /no session header/],
    ["malformed/binary.jsonl", /no session header/],
  ])("refuses %s with a reason", (name, reason) => {
    const parsed = parsePiSessionText(readFileSync(join(fixtures, name), "utf8"), name);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });

  it("refuses a file from a newer format version", () => {
    const parsed = parsePiSessionText(
      '{"type":"session","version":4,"id":"x","timestamp":"t","cwd":"/"}\n',
      "f",
    );
    expect(parsed).toMatchObject({ ok: false, reason: expect.stringMatching(/version 4 is newer/) });
  });
});
