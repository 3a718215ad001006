// Legacy import into the store (the future `doctor` command calls it). Owns: reading pi JSONL session files
// and OpenClaw `sessions.json` indexes with their transcripts, writing them through the store's own
// idempotent operations, and the report. Importing twice changes nothing: entries already stored with the
// same content are not written again (so the leaf is not moved either), and a session already mapped to the
// same id is only filled in, never overwritten. One bad line, record or file is reported and the rest goes on.
// Does not own: parsing rules (pi-session-file.ts, openclaw-index.ts) or the storage itself.
import { readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { SessionMeta } from "../session-meta.ts";
import type { SessionsApi } from "../sessions.ts";
import { canonicalJson, type Transcript, type TranscriptHeader } from "../transcript.ts";
import { parseOpenClawSessionIndex } from "./openclaw-index.ts";
import { parsePiSessionText } from "./pi-session-file.ts";
import type { ImportNote, ImportReport, SessionImportResult, TranscriptImportResult } from "./report.ts";

/** What the import writes to: a store's transcripts and sessions. */
export interface LegacyImportTarget {
  openTranscript(agentId: string, sessionId: string, init?: { header: TranscriptHeader }): Transcript;
  readonly sessions: SessionsApi;
}

export interface PiFileImportOptions {
  readonly agentId: string;
  /** Store the transcript under this id instead of the header's (the header is rewritten to match). */
  readonly sessionId?: string;
  /** Also map `{agentId, sessionKey}` to the session (pi files have no session key of their own). */
  readonly sessionKey?: string;
}

/** Imports one pi JSONL session file (format v1–v3). Never throws for bad content: it is in the report. */
export async function importPiSessionFile(
  target: LegacyImportTarget,
  file: string,
  options: PiFileImportOptions,
): Promise<ImportReport> {
  const report = new ReportBuilder();
  const transcript = importTranscriptFile(target, file, options.agentId, options.sessionId, report);
  if (transcript !== undefined && options.sessionKey !== undefined) {
    await importSessionRecord(
      target,
      {
        file,
        agentId: options.agentId,
        sessionKey: options.sessionKey,
        sessionId: transcript.sessionId,
        meta: {},
      },
      report,
    );
  }
  return report.build();
}

export interface OpenClawImportOptions {
  readonly agentId: string;
}

/**
 * Imports an OpenClaw agent's `sessions.json` and each session's JSONL transcript: the record's `sessionFile`
 * when it exists, else the file of that name next to `sessions.json`, else `<sessionId>.jsonl` there.
 */
export async function importOpenClawSessions(
  target: LegacyImportTarget,
  sessionsJsonFile: string,
  options: OpenClawImportOptions,
): Promise<ImportReport> {
  const report = new ReportBuilder();
  const text = readText(sessionsJsonFile, report);
  if (text === undefined) return report.build();
  const index = parseOpenClawSessionIndex(text, sessionsJsonFile);
  if (!index.ok) {
    report.skip({ file: sessionsJsonFile, reason: `not imported: ${index.reason}` });
    return report.build();
  }
  report.skipAll(index.skipped);
  const folder = dirname(sessionsJsonFile);
  for (const record of index.records) {
    const transcriptFile = findTranscriptFile(folder, record.sessionId, record.meta.sessionFile);
    if (transcriptFile === undefined) {
      report.skip({
        file: sessionsJsonFile,
        reason: `session ${JSON.stringify(record.sessionKey)}: no transcript file found for ${record.sessionId}; the session is imported without one`,
      });
    } else {
      importTranscriptFile(target, transcriptFile, options.agentId, record.sessionId, report);
    }
    await importSessionRecord(
      target,
      {
        file: sessionsJsonFile,
        agentId: options.agentId,
        sessionKey: record.sessionKey,
        sessionId: record.sessionId,
        meta: record.meta,
        ...(record.updatedAt === undefined ? {} : { updatedAt: record.updatedAt }),
      },
      report,
    );
  }
  return report.build();
}

/** Several reports as one (importing a folder of files). */
export function mergeImportReports(reports: readonly ImportReport[]): ImportReport {
  return {
    transcripts: reports.flatMap((report) => report.transcripts),
    sessions: reports.flatMap((report) => report.sessions),
    skipped: reports.flatMap((report) => report.skipped),
    repaired: reports.flatMap((report) => report.repaired),
  };
}

function importTranscriptFile(
  target: LegacyImportTarget,
  file: string,
  agentId: string,
  sessionIdOverride: string | undefined,
  report: ReportBuilder,
): TranscriptImportResult | undefined {
  const text = readText(file, report);
  if (text === undefined) return undefined;
  const parsed = parsePiSessionText(text, file);
  if (!parsed.ok) {
    report.skipAll(parsed.skipped);
    report.skip({ file, reason: `not imported: ${parsed.reason}` });
    return undefined;
  }
  const session = parsed.session;
  report.skipAll(session.skipped);
  report.repairAll(session.repaired);
  const sessionId = sessionIdOverride ?? session.header.id;
  let header = session.header;
  if (header.id !== sessionId) {
    report.repair({
      file,
      line: 1,
      reason: `header id ${header.id} replaced by the session id ${sessionId}`,
    });
    header = { ...header, id: sessionId };
  }
  let transcript: Transcript;
  try {
    transcript = target.openTranscript(agentId, sessionId, { header });
  } catch (error) {
    report.skip({
      file,
      reason: `not imported: the store refused session ${sessionId} (${describe(error)})`,
    });
    return undefined;
  }
  let added = 0;
  let alreadyStored = 0;
  for (const [index, entry] of session.entries.entries()) {
    const line = session.entryLines[index] ?? 0;
    const stored = transcript.getEntry(entry.id);
    if (stored !== undefined) {
      if (canonicalJson(stored) === canonicalJson(entry)) alreadyStored++;
      else
        report.skip({ file, line, reason: `entry ${entry.id}: the store holds other content under this id` });
      continue;
    }
    try {
      transcript.append(entry);
      added++;
    } catch (error) {
      report.skip({ file, line, reason: `entry ${entry.id}: the store refused it (${describe(error)})` });
    }
  }
  const result: TranscriptImportResult = {
    file,
    agentId,
    sessionId,
    formatVersion: session.formatVersion,
    added,
    alreadyStored,
  };
  report.transcript(result);
  return result;
}

interface SessionRecordInput {
  readonly file: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly meta: SessionMeta;
  readonly updatedAt?: number;
}

async function importSessionRecord(
  target: LegacyImportTarget,
  input: SessionRecordInput,
  report: ReportBuilder,
): Promise<void> {
  const ref = { agentId: input.agentId, sessionKey: input.sessionKey };
  const result = (outcome: SessionImportResult["outcome"]): SessionImportResult => ({
    file: input.file,
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    outcome,
  });
  try {
    const stored = await target.sessions.get(ref);
    if (stored === undefined) {
      await target.sessions.create({
        ...ref,
        sessionId: input.sessionId,
        meta: input.meta,
        ...(input.updatedAt === undefined ? {} : { now: input.updatedAt }),
      });
      report.session(result("created"));
      return;
    }
    if (stored.sessionId !== input.sessionId) {
      report.skip({
        file: input.file,
        reason: `session ${JSON.stringify(input.sessionKey)}: the store already maps it to session ${stored.sessionId} (not ${input.sessionId}); left as stored`,
      });
      return;
    }
    // Same session: fill in only what the store lacks, so a re-import or a session the kernel has used
    // since keeps every value it holds.
    const missing = Object.fromEntries(
      Object.entries(input.meta).filter(([field]) => !Object.hasOwn(stored.meta, field)),
    ) as SessionMeta;
    if (Object.keys(missing).length === 0) {
      report.session(result("unchanged"));
      return;
    }
    await target.sessions.patch(ref, (current) =>
      Object.fromEntries(Object.entries(missing).filter(([field]) => !Object.hasOwn(current.meta, field))),
    );
    report.session(result("updated"));
  } catch (error) {
    report.skip({
      file: input.file,
      reason: `session ${JSON.stringify(input.sessionKey)}: the store refused it (${describe(error)})`,
    });
  }
}

function findTranscriptFile(
  folder: string,
  sessionId: string,
  sessionFile: string | undefined,
): string | undefined {
  const candidates = [
    ...(sessionFile === undefined ? [] : [sessionFile, join(folder, basename(sessionFile))]),
    join(folder, `${sessionId}.jsonl`),
  ];
  return candidates.find(isFile);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function readText(file: string, report: ReportBuilder): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    report.skip({ file, reason: `not imported: cannot read the file (${describe(error)})` });
    return undefined;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

class ReportBuilder {
  readonly #transcripts: TranscriptImportResult[] = [];
  readonly #sessions: SessionImportResult[] = [];
  readonly #skipped: ImportNote[] = [];
  readonly #repaired: ImportNote[] = [];

  transcript(result: TranscriptImportResult): void {
    this.#transcripts.push(result);
  }
  session(result: SessionImportResult): void {
    this.#sessions.push(result);
  }
  skip(note: ImportNote): void {
    this.#skipped.push(note);
  }
  skipAll(notes: readonly ImportNote[]): void {
    this.#skipped.push(...notes);
  }
  repair(note: ImportNote): void {
    this.#repaired.push(note);
  }
  repairAll(notes: readonly ImportNote[]): void {
    this.#repaired.push(...notes);
  }
  build(): ImportReport {
    return {
      transcripts: [...this.#transcripts],
      sessions: [...this.#sessions],
      skipped: [...this.#skipped],
      repaired: [...this.#repaired],
    };
  }
}
