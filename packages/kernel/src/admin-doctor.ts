// The store's doctor: migrate on open, import legacy JSON/JSONL sessions, then a logical integrity check
// (transcripts readable, branches whole, runs' sessions known, nothing left running without an owner) and the
// sandbox security report. Free of pi and of runtime-resolver, like the rest of the admin entry. Does not own:
// the transcript checks (doctor-transcripts.ts), the security checks (doctor-security.ts), the importers or
// the store's rules (session-store).
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { defaultAgentId, type KernelConfig, listAgentIds } from "@agent-kernel/config";
import type { SandboxEngine } from "@agent-kernel/sandbox";
import {
  type AppendReplay,
  type ImportReport,
  importOpenClawSessions,
  importPiSessionFile,
  mergeImportReports,
  type SchemaInfo,
  type SessionStore,
  type SqliteSessionStore,
} from "@agent-kernel/session-store";
import { checkSecurity, type SecurityReport } from "./doctor-security.ts";
import { checkTranscript, type QuarantinedTranscriptRow } from "./doctor-transcripts.ts";

/** Where the store lives, for reports: its state dir (SQLite) or `postgres:<schema>`. */
function storeLocation(store: SessionStore): string {
  if ("stateDir" in store && typeof store.stateDir === "string") return store.stateDir;
  if ("schemaName" in store && typeof store.schemaName === "string") return `postgres:${store.schemaName}`;
  return "";
}

export interface IntegrityProblem {
  readonly where: string;
  readonly problem: string;
}

export interface DoctorReport {
  readonly stateDir: string;
  readonly schema: SchemaInfo;
  /** Runs found `running` under a dead owner and marked `interrupted` when the store was opened. */
  readonly recoveredRuns: readonly string[];
  /**
   * SQLite: append journals of processes that died before folding them, replayed when the check opened their
   * agent's database (what was stored, and each line that could not be).
   */
  readonly recoveredAppends: readonly AppendReplay[];
  readonly imported?: ImportReport;
  readonly checked: { readonly sessions: number; readonly transcripts: number; readonly runs: number };
  readonly problems: readonly IntegrityProblem[];
  /**
   * Transcript rows the store set aside as damaged (kept byte for byte; reads skip them). One found by this
   * check is also a problem; one set aside before (by a turn, which reported it) is listed here only.
   */
  readonly quarantined: readonly QuarantinedTranscriptRow[];
  /** The sandbox engine of each sandboxed agent, and who can run exec unsandboxed (doctor-security.ts). */
  readonly security: SecurityReport;
}

/** Legacy files under `path`: a `sessions.json` (OpenClaw) or `.jsonl` files (pi), a folder searched one level. */
interface LegacyFile {
  readonly kind: "openclaw" | "pi";
  readonly file: string;
}

function legacyFiles(path: string): LegacyFile[] {
  if (!existsSync(path)) throw new Error(`legacy path ${path} does not exist`);
  const classify = (file: string): LegacyFile[] =>
    basename(file) === "sessions.json"
      ? [{ kind: "openclaw", file }]
      : file.endsWith(".jsonl")
        ? [{ kind: "pi", file }]
        : [];
  if (!statSync(path).isDirectory()) {
    const found = classify(path);
    if (found.length === 0)
      throw new Error(`${path} is neither a sessions.json index nor a .jsonl transcript`);
    return found;
  }
  const names = readdirSync(path).sort();
  // A folder with an OpenClaw index: its transcripts are imported through the index, not one by one.
  if (names.includes("sessions.json")) return [{ kind: "openclaw", file: join(path, "sessions.json") }];
  return names.flatMap((name) => classify(join(path, name)));
}

/**
 * Migrates (opening the store does that), imports legacy files for `agentId` (default: the default agent),
 * then checks what the store holds: every session's transcript readable (a damaged row is set aside and
 * reported), its active branch whole from leaf to root, every run's session known, no run left `running`
 * without an owner.
 */
export async function runDoctor(
  store: SessionStore,
  config: KernelConfig,
  options: {
    readonly legacyPaths?: readonly string[];
    readonly agentId?: string | undefined;
    /** The bubblewrap engine to probe (a test's, at another path); default the one on PATH. */
    readonly bwrap?: SandboxEngine | undefined;
  } = {},
): Promise<DoctorReport> {
  const agentId = options.agentId?.trim().toLowerCase() || defaultAgentId(config);
  let imported: ImportReport | undefined;
  if (options.legacyPaths !== undefined && options.legacyPaths.length > 0) {
    const reports: ImportReport[] = [];
    for (const path of options.legacyPaths) {
      for (const { kind, file } of legacyFiles(path)) {
        reports.push(
          kind === "openclaw"
            ? await importOpenClawSessions(store, file, { agentId })
            : await importPiSessionFile(store, file, { agentId }),
        );
      }
    }
    imported = mergeImportReports(reports);
  }
  const problems: IntegrityProblem[] = [];
  const quarantined: QuarantinedTranscriptRow[] = [];
  const unreadableAgents = new Set<string>();
  let sessions = 0;
  let transcripts = 0;
  let runs = 0;
  const agents = [...new Set([...listAgentIds(config), defaultAgentId(config), agentId])];
  for (const id of agents) {
    for (const row of await store.sessions.list(id)) {
      sessions += 1;
      const where = `session ${row.sessionKey} (${row.sessionId})`;
      await store.loadTranscript(id, row.sessionId);
      let hasTranscript = false;
      if (!unreadableAgents.has(id)) {
        try {
          hasTranscript = store.hasTranscript(id, row.sessionId);
        } catch (error) {
          // The agent's database itself is refused (empty, not SQLite, unreadable): said once per agent.
          unreadableAgents.add(id);
          problems.push({
            where: `agent ${id}`,
            problem: `transcripts unreadable: ${(error as Error).message}`,
          });
        }
      }
      if (hasTranscript) {
        transcripts += 1;
        const check = checkTranscript(store, id, row, where);
        problems.push(...check.problems);
        quarantined.push(...check.quarantined);
      }
      for (const run of await store.runs.listForSession(row, { limit: 1000 })) {
        runs += 1;
        if (run.status === "running") {
          problems.push({
            where: `run ${run.runId}`,
            problem: "still running: the process that started it is alive (or on another host)",
          });
        }
        if (run.sessionId !== row.sessionId) await store.loadTranscript(id, run.sessionId);
        if (
          run.status === "succeeded" &&
          !unreadableAgents.has(id) &&
          !store.hasTranscript(id, run.sessionId)
        ) {
          // A run that answered wrote its transcript; without it the session lost its history.
          problems.push({ where: `run ${run.runId}`, problem: `its transcript ${run.sessionId} is missing` });
        }
      }
    }
  }
  const security = await checkSecurity(config, { bwrap: options.bwrap });
  problems.push(...security.problems);
  return {
    stateDir: storeLocation(store),
    schema: await store.schema(),
    security,
    recoveredRuns: store.recoveredRuns.map((run) => run.runId),
    recoveredAppends: "recoveredAppends" in store ? (store as SqliteSessionStore).recoveredAppends : [],
    ...(imported === undefined ? {} : { imported }),
    checked: { sessions, transcripts, runs },
    problems,
    quarantined,
  };
}
