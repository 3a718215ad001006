// The legacy-import part of the conformance suite (`runSessionStoreConformance` calls it): every backend must
// import pi and OpenClaw files idempotently, report malformed input by file and line, and lose nothing it
// already holds. Owns: those cases and the small legacy files they write to a temporary folder (the suite
// ships without fixture files). Does not own: the import itself (src/legacy) or backend set-up (the factory).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importOpenClawSessions, importPiSessionFile } from "../legacy/import.ts";
import { importChangedNothing } from "../legacy/report.ts";
import type { SessionStore } from "../store.ts";
import type { TranscriptEntry } from "../transcript.ts";
import type { SessionStoreFactory, StoreFixture } from "./conformance.ts";

const AGENT = "main";
const PI_SESSION_ID = "7f3a9c1e-1111-4000-8000-000000000001";
const OC_MAIN_ID = "7f3a9c1e-2222-4000-8000-000000000002";
const OC_DM_ID = "7f3a9c1e-3333-4000-8000-000000000003";

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { total: 0 } };
const user = (text: string, timestamp: number) => ({
  role: "user",
  content: [{ type: "text", text }],
  timestamp,
});
const assistant = (text: string, timestamp: number) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "faux",
  provider: "faux",
  model: "faux-1",
  usage,
  stopReason: "stop",
  timestamp,
});
const jsonl = (lines: readonly unknown[]) =>
  `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`;

/** A format-v1 pi file: no ids, a compaction pointing at an entry by index. */
function piV1File(): string {
  return jsonl([
    { type: "session", id: PI_SESSION_ID, timestamp: "2025-11-01T00:00:00.000Z", cwd: "/project" },
    { type: "message", timestamp: "2025-11-01T00:00:01.000Z", message: user("first question", 1) },
    { type: "message", timestamp: "2025-11-01T00:00:02.000Z", message: assistant("first answer", 2) },
    { type: "message", timestamp: "2025-11-01T00:00:03.000Z", message: user("second question", 3) },
    { type: "message", timestamp: "2025-11-01T00:00:04.000Z", message: assistant("second answer", 4) },
    {
      type: "compaction",
      timestamp: "2025-11-01T00:00:05.000Z",
      summary: "two questions",
      firstKeptEntryIndex: 3,
      tokensBefore: 40,
    },
    { type: "message", timestamp: "2025-11-01T00:00:06.000Z", message: user("third question", 6) },
  ]);
}

function v3Entry(id: string, parentId: string | null, message: unknown, second: number) {
  return { type: "message", id, parentId, timestamp: `2026-01-01T00:00:0${second}.000Z`, message };
}

/** An OpenClaw agent folder: sessions.json (one bad record) and two transcripts, one with malformed lines. */
function writeOpenClawFolder(folder: string): string {
  const index = join(folder, "sessions.json");
  writeFileSync(
    index,
    JSON.stringify({
      "agent:main:main": {
        sessionId: OC_MAIN_ID,
        updatedAt: 1_767_225_600_000,
        thinkingLevel: "low",
        compactionCount: 2,
      },
      "agent:main:telegram:direct:42": {
        sessionId: OC_DM_ID,
        updatedAt: 1_767_225_700_000,
        chatType: "direct",
        modelOverride: "faux-2",
        modelOverrideSource: "sometimes",
      },
      "agent:main:nothing": { updatedAt: 1 },
    }),
  );
  const header = (id: string) => ({
    type: "session",
    version: 3,
    id,
    timestamp: "2026-01-01T00:00:00.000Z",
    cwd: "/w",
  });
  writeFileSync(
    join(folder, `${OC_MAIN_ID}.jsonl`),
    jsonl([
      header(OC_MAIN_ID),
      v3Entry("m1", null, user("hi", 1), 1),
      v3Entry("m2", "m1", assistant("hello", 2), 2),
    ]),
  );
  writeFileSync(
    join(folder, `${OC_DM_ID}.jsonl`),
    jsonl([
      header(OC_DM_ID),
      v3Entry("d1", null, user("dm", 1), 1),
      '{"type":"message","id":"d2","parentId":"d1","timest',
      v3Entry("d3", "d1", assistant("dm answer", 3), 3),
      "plain text, not JSON",
    ]),
  );
  return index;
}

interface Snapshot {
  readonly entries: Record<string, readonly TranscriptEntry[]>;
  readonly leaves: Record<string, string | null>;
  readonly sessions: unknown;
}

async function snapshot(store: SessionStore, sessionIds: readonly string[]): Promise<Snapshot> {
  const entries: Record<string, readonly TranscriptEntry[]> = {};
  const leaves: Record<string, string | null> = {};
  for (const sessionId of sessionIds) {
    await store.loadTranscript(AGENT, sessionId);
    if (!store.hasTranscript(AGENT, sessionId)) continue;
    const transcript = store.openTranscript(AGENT, sessionId);
    entries[sessionId] = transcript.getEntries();
    leaves[sessionId] = transcript.getLeafId();
  }
  return { entries, leaves, sessions: await store.sessions.list(AGENT) };
}

async function withImportStore(
  factory: SessionStoreFactory,
  body: (store: SessionStore, folder: string, fixture: StoreFixture) => Promise<void>,
): Promise<void> {
  const fixture = await factory();
  const folder = mkdtempSync(join(tmpdir(), "import-conformance-"));
  const store = await fixture.open();
  try {
    // Imports write transcripts through the synchronous calls: load the ones the files name (PostgreSQL).
    for (const sessionId of [PI_SESSION_ID, OC_MAIN_ID, OC_DM_ID])
      await store.loadTranscript(AGENT, sessionId);
    await body(store, folder, fixture);
  } finally {
    await store.close();
    await fixture.dispose();
    rmSync(folder, { recursive: true, force: true });
  }
}

export function runImportConformance(factory: SessionStoreFactory): void {
  describe("legacy import", () => {
    it("imports a pi v1 file as a tree with its compaction; importing it again changes nothing", () =>
      withImportStore(factory, async (store, folder) => {
        const file = join(folder, "v1.jsonl");
        writeFileSync(file, piV1File());
        const first = await importPiSessionFile(store, file, {
          agentId: AGENT,
          sessionKey: "agent:main:imported",
        });
        expect(first.skipped).toEqual([]);
        expect(first.transcripts).toEqual([
          { file, agentId: AGENT, sessionId: PI_SESSION_ID, formatVersion: 1, added: 6, alreadyStored: 0 },
        ]);
        expect(first.sessions).toMatchObject([{ sessionKey: "agent:main:imported", outcome: "created" }]);
        const transcript = store.openTranscript(AGENT, PI_SESSION_ID);
        const entries = transcript.getEntries();
        expect(entries.map((entry) => entry.parentId)).toEqual([
          null,
          ...entries.slice(0, -1).map((entry) => entry.id),
        ]);
        expect(transcript.getLeafId()).toBe(entries.at(-1)?.id);
        const compaction = entries.find((entry) => entry.type === "compaction");
        expect(compaction?.firstKeptEntryId).toBe(entries[2]?.id);
        expect(compaction).not.toHaveProperty("firstKeptEntryIndex");
        expect(transcript.getHeader()).toMatchObject({ id: PI_SESSION_ID, version: 3, cwd: "/project" });

        const before = await snapshot(store, [PI_SESSION_ID]);
        const second = await importPiSessionFile(store, file, {
          agentId: AGENT,
          sessionKey: "agent:main:imported",
        });
        expect(importChangedNothing(second)).toBe(true);
        expect(second.transcripts[0]).toMatchObject({ added: 0, alreadyStored: 6 });
        expect(second.sessions).toMatchObject([{ outcome: "unchanged" }]);
        expect(await snapshot(store, [PI_SESSION_ID])).toEqual(before);
      }));

    it("imports an OpenClaw sessions.json with its transcripts, reports every malformed line and record, and a second import changes nothing", () =>
      withImportStore(factory, async (store, folder) => {
        const index = writeOpenClawFolder(folder);
        const dmFile = join(folder, `${OC_DM_ID}.jsonl`);
        const first = await importOpenClawSessions(store, index, { agentId: AGENT });
        expect(first.sessions.map((session) => [session.sessionKey, session.outcome])).toEqual([
          ["agent:main:main", "created"],
          ["agent:main:telegram:direct:42", "created"],
        ]);
        expect(first.transcripts.map((transcript) => [transcript.sessionId, transcript.added])).toEqual([
          [OC_MAIN_ID, 2],
          [OC_DM_ID, 2],
        ]);
        const lineNotes = first.skipped.filter((note) => note.line !== undefined);
        expect(lineNotes.map((note) => [note.file, note.line])).toEqual([
          [dmFile, 3],
          [dmFile, 5],
        ]);
        const fileNotes = first.skipped.filter((note) => note.line === undefined).map((note) => note.reason);
        expect(fileNotes).toEqual([
          expect.stringMatching(/modelOverrideSource left out/),
          expect.stringMatching(/"agent:main:nothing": no sessionId/),
        ]);
        const main = await store.sessions.get({ agentId: AGENT, sessionKey: "agent:main:main" });
        expect(main).toMatchObject({
          sessionId: OC_MAIN_ID,
          meta: { thinkingLevel: "low", compactionCount: 2 },
        });
        const dm = await store.sessions.get({ agentId: AGENT, sessionKey: "agent:main:telegram:direct:42" });
        expect(dm?.meta).toMatchObject({ chatType: "direct", modelOverride: "faux-2" });
        expect(dm?.meta).not.toHaveProperty("modelOverrideSource");
        expect(
          store
            .openTranscript(AGENT, OC_DM_ID)
            .getBranch()
            .map((entry) => entry.id),
        ).toEqual(["d1", "d3"]);

        const before = await snapshot(store, [OC_MAIN_ID, OC_DM_ID]);
        const second = await importOpenClawSessions(store, index, { agentId: AGENT });
        expect(importChangedNothing(second)).toBe(true);
        expect(await snapshot(store, [OC_MAIN_ID, OC_DM_ID])).toEqual(before);
      }));

    it("a re-import after the session went on keeps the new entries, the leaf and newer metadata", () =>
      withImportStore(factory, async (store, folder) => {
        const index = writeOpenClawFolder(folder);
        await importOpenClawSessions(store, index, { agentId: AGENT });
        const transcript = store.openTranscript(AGENT, OC_MAIN_ID);
        transcript.append(v3Entry("m3", "m2", user("after the import", 3), 3));
        const ref = { agentId: AGENT, sessionKey: "agent:main:main" };
        await store.sessions.patch(ref, { thinkingLevel: "high" });
        const before = await snapshot(store, [OC_MAIN_ID, OC_DM_ID]);
        const again = await importOpenClawSessions(store, index, { agentId: AGENT });
        expect(importChangedNothing(again)).toBe(true);
        expect(await snapshot(store, [OC_MAIN_ID, OC_DM_ID])).toEqual(before);
        expect(store.openTranscript(AGENT, OC_MAIN_ID).getLeafId()).toBe("m3");
        expect((await store.sessions.get(ref))?.meta.thinkingLevel).toBe("high");
      }));

    it("reports files that are not sessions, or not JSON, and loses nothing already stored", () =>
      withImportStore(factory, async (store, folder) => {
        const good = join(folder, "v1.jsonl");
        writeFileSync(good, piV1File());
        await importPiSessionFile(store, good, { agentId: AGENT });
        const before = await snapshot(store, [PI_SESSION_ID]);

        const binary = join(folder, "binary.jsonl");
        writeFileSync(binary, Buffer.from([0x53, 0x51, 0x4c, 0x00, 0xff, 0x0a, 0x01, 0x02]));
        const noHeader = join(folder, "no-header.jsonl");
        writeFileSync(noHeader, jsonl([{ type: "message", timestamp: "t", message: user("orphan", 1) }]));
        const badIndex = join(folder, "sessions.json");
        writeFileSync(badIndex, '{"agent:main:main": {"sessionId": "x",}');
        const missing = join(folder, "does-not-exist.jsonl");

        const reports = [
          await importPiSessionFile(store, binary, { agentId: AGENT }),
          await importPiSessionFile(store, noHeader, { agentId: AGENT }),
          await importOpenClawSessions(store, badIndex, { agentId: AGENT }),
          await importPiSessionFile(store, missing, { agentId: AGENT }),
        ];
        for (const report of reports) {
          expect(report.transcripts).toEqual([]);
          expect(report.sessions).toEqual([]);
        }
        expect(reports.map((report) => report.skipped.at(-1)?.reason)).toEqual([
          expect.stringMatching(/not imported: no session header/),
          expect.stringMatching(/not imported: not a pi session file: line 1/),
          expect.stringMatching(/not imported: malformed JSON/),
          expect.stringMatching(/not imported: cannot read the file/),
        ]);
        expect(
          reports[0]?.skipped.filter((note) => note.line !== undefined).map((note) => note.line),
        ).toEqual([1, 2]);
        expect(await snapshot(store, [PI_SESSION_ID])).toEqual(before);
      }));
  });
}
