import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSessionContext, type SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionStore, type SqliteSessionStore } from "../store.ts";
import { importOpenClawSessions, importPiSessionFile, mergeImportReports } from "./import.ts";
import { importChangedNothing } from "./report.ts";

const fixtures = join(import.meta.dirname, "../../fixtures/legacy");
let stateDir: string;
let store: SqliteSessionStore;

beforeEach(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "legacy-import-"));
  store = await openSessionStore({ stateDir });
});
afterEach(async () => {
  await store.close();
  rmSync(stateDir, { recursive: true, force: true });
});

/** pi's own context for a file, opened from a copy (pi rewrites v1/v2 files when it migrates them). */
function piContext(name: string) {
  const copy = join(stateDir, name.replaceAll("/", "-"));
  copyFileSync(join(fixtures, name), copy);
  return SessionManager.open(copy, stateDir).buildSessionContext();
}

describe("importing real pi session files", () => {
  it.each([
    ["large-session.jsonl", "d703a1a9-1b7b-4fb1-b512-c9738b1fe617", 1018],
    ["before-compaction.jsonl", "ffae836b-9420-4060-ac13-7745215f90ff", 1002],
  ])(
    "%s: the context built from the stored active branch equals pi's own",
    async (name, sessionId, count) => {
      const report = await importPiSessionFile(store, join(fixtures, name), { agentId: "main" });
      expect(report.skipped).toEqual([]);
      expect(report.transcripts).toMatchObject([
        { sessionId, formatVersion: 1, added: count, alreadyStored: 0 },
      ]);

      const transcript = store.openTranscript("main", sessionId);
      const branch = transcript.getBranch() as unknown as SessionEntry[];
      const ours = buildSessionContext(branch, transcript.getLeafId());
      const theirs = piContext(name);
      expect(ours).toEqual(theirs);
      expect(ours.messages.length).toBeGreaterThan(100);

      const again = await importPiSessionFile(store, join(fixtures, name), { agentId: "main" });
      expect(importChangedNothing(again)).toBe(true);
      expect(store.openTranscript("main", sessionId).count()).toBe(count);
    },
  );

  it("imports a v2 file, renaming hookMessage to custom, with pi's context", async () => {
    const name = "pi-v2/hook-session.jsonl";
    const report = await importPiSessionFile(store, join(fixtures, name), { agentId: "main" });
    expect(report.transcripts).toMatchObject([{ formatVersion: 2, added: 3 }]);
    const transcript = store.openTranscript("main", "c1d2e3f4-0000-4000-8000-000000000002");
    expect(buildSessionContext(transcript.getBranch() as unknown as SessionEntry[])).toEqual(piContext(name));
  });
});

describe("importing an OpenClaw agent folder", () => {
  it("imports sessions.json and the transcripts it names, reporting what it left out and why", async () => {
    const index = join(fixtures, "openclaw-agent/sessions.json");
    const dmFile = join(fixtures, "openclaw-agent/5d2e8f10-3c4b-4a7d-8e9f-0a1b2c3d4e5f.jsonl");
    const report = await importOpenClawSessions(store, index, { agentId: "main" });
    expect(report.sessions.map((session) => [session.sessionKey, session.outcome])).toEqual([
      ["agent:main:main", "created"],
      ["agent:main:telegram:direct:111", "created"],
      ["agent:main:telegram:group:-100", "created"],
    ]);
    expect(report.transcripts.map((transcript) => [transcript.sessionId, transcript.added])).toEqual([
      ["0b6f3c52-7a1e-4f0e-9a59-3f1d2c4e5a61", 11],
      ["5d2e8f10-3c4b-4a7d-8e9f-0a1b2c3d4e5f", 4],
    ]);
    expect(report.skipped.map((note) => [note.file, note.line ?? null, note.reason])).toEqual([
      [
        index,
        null,
        expect.stringMatching(
          /"agent:main:telegram:direct:111": field abortedLastRun left out, expected boolean/,
        ),
      ],
      [index, null, expect.stringMatching(/"agent:main:broken": the entry is not an object/)],
      [index, null, expect.stringMatching(/"agent:main:no-id": no sessionId/)],
      [
        index,
        null,
        expect.stringMatching(/fields the kernel does not own were not imported: heartbeatSeenAt \(1\)/),
      ],
      [dmFile, 4, expect.stringMatching(/malformed JSON/)],
      [dmFile, 6, expect.stringMatching(/malformed JSON/)],
      [index, null, expect.stringMatching(/"agent:main:telegram:group:-100": no transcript file found/)],
    ]);
    const main = await store.sessions.get({ agentId: "main", sessionKey: "agent:main:main" });
    expect(main?.meta).toMatchObject({
      thinkingLevel: "low",
      modelOverride: "claude-sonnet-4-5",
      providerOverride: "anthropic",
      modelOverrideSource: "user",
      compactionCount: 1,
      origin: { provider: "cli", surface: "terminal" },
    });
    // The transcript's context is pi's: compaction summary, kept assistant message, the turn after it.
    const transcript = store.openTranscript("main", "0b6f3c52-7a1e-4f0e-9a59-3f1d2c4e5a61");
    const context = buildSessionContext(transcript.getBranch() as unknown as SessionEntry[]);
    expect(context.messages.map((message) => message.role)).toEqual([
      "compactionSummary",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(context.thinkingLevel).toBe("low");

    const again = await importOpenClawSessions(store, index, { agentId: "main" });
    expect(importChangedNothing(again)).toBe(true);
    expect(mergeImportReports([report, again]).sessions).toHaveLength(6);
  });

  it("refuses a sessions.json that is not JSON and imports nothing from it", async () => {
    const index = join(fixtures, "malformed/sessions.json");
    const report = await importOpenClawSessions(store, index, { agentId: "main" });
    expect(report).toEqual({
      transcripts: [],
      sessions: [],
      repaired: [],
      skipped: [{ file: index, reason: expect.stringMatching(/^not imported: malformed JSON/) }],
    });
    expect(await store.sessions.list("main")).toEqual([]);
  });

  it("stores a broken tree's usable entries, repaired, and reports the rest by line", async () => {
    const file = join(fixtures, "malformed/broken-tree.jsonl");
    const report = await importPiSessionFile(store, file, { agentId: "main" });
    expect(report.skipped.map((note) => note.line)).toEqual([4, 5, 6]);
    expect(report.repaired.map((note) => note.line)).toEqual([7]);
    const transcript = store.openTranscript("main", "d0d0d0d0-0000-4000-8000-000000000003");
    expect(transcript.getEntries().map((entry) => entry.id)).toEqual([
      "d0000001",
      "d0000002",
      "d0000004",
      "d0000005",
    ]);
    expect(transcript.getBranch().map((entry) => entry.id)).toEqual(["d0000004", "d0000005"]);
  });
});
