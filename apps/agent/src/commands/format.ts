// Plain-text rendering of sessions and runs for the terminal. Owns layout only; the data comes from the
// kernel's admin facades. Imports no pi.
import type { RunRecord, RunReport, SessionDetails, SessionSummary } from "@agent-kernel/kernel/admin";

export function time(ms: number | undefined): string {
  return ms === undefined
    ? "-"
    : new Date(ms)
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, "Z");
}

function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

export function formatSessionList(sessions: readonly SessionSummary[]): string {
  if (sessions.length === 0) return "No sessions.";
  return table([
    ["SESSION KEY", "SESSION ID", "UPDATED", "MODEL", "TOKENS"],
    ...sessions.map((s) => [
      s.sessionKey,
      s.sessionId,
      time(s.updatedAt),
      s.model ? `${s.modelProvider ?? "?"}/${s.model}` : "-",
      String(s.totalTokens ?? "-"),
    ]),
  ]);
}

export function formatRunList(runs: readonly RunRecord[]): string {
  if (runs.length === 0) return "No runs.";
  return table([
    ["RUN ID", "STARTED", "STATUS", "ENTRY", "MODEL", "SESSION KEY"],
    ...runs.map((r) => [
      r.runId,
      time(r.startedAt),
      r.status,
      r.entryPoint,
      r.model ? `${r.provider ?? "?"}/${r.model}` : "-",
      r.sessionKey,
    ]),
  ]);
}

export function formatSession(details: SessionDetails): string {
  const { session } = details;
  const lines = [
    `Session ${session.sessionKey}`,
    `  agent:       ${session.agentId}`,
    `  session id:  ${session.sessionId}`,
    `  created:     ${time(session.createdAt)}   updated: ${time(session.updatedAt)}`,
    `  transcript:  ${details.transcriptEntries} entries`,
    `  metadata:    ${JSON.stringify(session.meta)}`,
    "",
    `Messages (current branch, ${details.messages.length}):`,
    ...details.messages.map((m) => `  ${m.role.padEnd(10)} ${m.text.replace(/\s+/g, " ").slice(0, 160)}`),
    "",
    `Runs (newest first, ${details.runs.length}):`,
    ...(details.runs.length === 0
      ? ["  none"]
      : formatRunList(details.runs)
          .split("\n")
          .map((l) => `  ${l}`)),
  ];
  return lines.join("\n");
}

function indentJson(value: unknown): string {
  return JSON.stringify(value);
}

function decisionLine(runtime: Readonly<Record<string, unknown>>, key: string): string {
  const entry = runtime[key];
  if (typeof entry === "object" && entry !== null && "value" in entry) {
    const { value, source } = entry as { value: unknown; source?: unknown };
    const shown = typeof value === "object" && value !== null && "key" in value ? value.key : value;
    return `${typeof shown === "string" ? shown : indentJson(shown)}${source === undefined ? "" : `  (${String(source)})`}`;
  }
  return indentJson(entry);
}

interface RecordedSandbox {
  sandboxed?: boolean;
  mode?: string;
  scope?: string;
  scopeKey?: string;
  workspaceAccess?: string;
  engine?: string;
  network?: boolean;
  cwd?: string;
  mounts?: { path: string; hostPath: string; writable: boolean }[];
  limits?: { timeoutMs: number; maxOutputBytes: number; memoryBytes: number; maxProcesses: number };
}

/** Where the run's tools ran: the sandbox decision as recorded (older runs recorded only mode and scope). */
function formatSandbox(recorded: unknown): string[] {
  if (typeof recorded !== "object" || recorded === null) return ["Sandbox: not recorded"];
  const sandbox = recorded as RecordedSandbox;
  if (!sandbox.sandboxed) {
    return [
      `Sandbox: none (mode ${sandbox.mode ?? "off"}): exec and the file tools ran on the host, in ${sandbox.cwd ?? "the workspace"}, with a scrubbed environment`,
    ];
  }
  const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`;
  const lines = [
    `Sandbox: ${sandbox.engine ?? "?"} (mode ${sandbox.mode}, scope ${sandbox.scope} "${sandbox.scopeKey}", workspace access ${sandbox.workspaceAccess})`,
    ...(sandbox.mounts ?? []).map(
      (mount) =>
        `  ${mount.path.padEnd(12)} ${mount.writable ? "read-write" : "read-only "}  ${mount.hostPath}`,
    ),
    `  network      ${sandbox.network ? "on" : "off"}`,
  ];
  const limits = sandbox.limits;
  if (limits) {
    lines.push(
      `  limits       ${limits.timeoutMs / 1000} s, ${limits.maxOutputBytes} bytes of output, ${mib(limits.memoryBytes)} of memory, ${limits.maxProcesses} processes`,
    );
  }
  return lines;
}

/**
 * The models the run moved through. The stored chain holds one entry per failed attempt, then the answering
 * attempt's; a retry of the same model is one step, not a fallback.
 */
function formatFallback(report: RunReport): string {
  const { run, attempts } = report;
  const models: string[] = [];
  for (const a of attempts) {
    const model = `${a.provider ?? "?"}/${a.model ?? "?"}`;
    if (models.at(-1) !== model) models.push(model);
  }
  if (models.length > 1) {
    const steps = models.map((model, i) => {
      const last = attempts.findLast((a) => `${a.provider ?? "?"}/${a.model ?? "?"}` === model);
      const answered = i === models.length - 1 && run.status === "succeeded";
      return `${model} (${answered ? "answered" : (last?.reason ?? last?.outcome ?? "?")})`;
    });
    return `Fallback: ${steps.join(" → ")}`;
  }
  if (attempts.length === 0) return "Fallback: none (no attempt ran)";
  if (run.status === "succeeded") return "Fallback: none (the first candidate answered)";
  return `Fallback: none (${models[0] ?? "the first candidate"} failed and no other model was tried)`;
}

/** Every decision of a run: runtime, tool policy, defaults, attempts, fallback, tool calls, replies. */
export function formatRunReport(report: RunReport): string {
  const { run } = report;
  const out = [
    `Run ${run.runId}`,
    `  status:      ${run.status}${run.errorReason ? ` (${run.errorReason}: ${run.errorMessage ?? ""})` : ""}`,
    `  entry point: ${run.entryPoint}`,
    `  session:     ${run.sessionKey} (${run.sessionId}), agent ${run.agentId}`,
    `  started:     ${time(run.startedAt)}   ended: ${time(run.endedAt)}${run.endedAt === undefined ? "" : `   (${run.endedAt - run.startedAt} ms)`}`,
    `  ${run.status === "succeeded" ? "answered by:" : "last model: "} ${run.model ? `${run.provider ?? "?"}/${run.model}` : "-"}   thinking: ${run.thinkingLevel ?? "-"}${run.authProfileId ? `   auth profile: ${run.authProfileId}` : ""}`,
    `  usage:       ${run.usage ? `input ${run.usage.input ?? 0}, output ${run.usage.output ?? 0}, cache read ${run.usage.cacheRead ?? 0}, cache write ${run.usage.cacheWrite ?? 0}, total ${run.usage.total ?? 0}` : "-"}${run.costUsd ? `, $${run.costUsd.toFixed(6)}` : ""}`,
  ];
  const decisions = report.decisions;
  if (decisions?.parentRunId !== undefined) out.push(`  parent run:  ${decisions.parentRunId}`);
  for (const child of report.childRuns ?? [])
    out.push(`  child run:   ${child.runId} (${child.tool} → ${child.sessionKey}, ${child.status})`);
  out.push("", "Runtime (decided before the run):");
  if (decisions === undefined) out.push("  not recorded");
  else {
    const runtime = decisions.runtime;
    for (const key of [
      "agentId",
      "sessionKey",
      "sessionId",
      "workspaceDir",
      "model",
      "thinking",
      "contextTokens",
      "timeoutMs",
    ]) {
      if (key in runtime) out.push(`  ${key.padEnd(14)} ${decisionLine(runtime, key)}`);
    }
    const candidates = runtime.candidates;
    if (Array.isArray(candidates)) {
      out.push(
        `  candidates     ${candidates.map((c: { provider?: string; model?: string; origin?: string }) => `${c.provider}/${c.model} (${c.origin ?? "?"})`).join(" → ") || "-"}`,
      );
    }
    const auth = runtime.authProfile as { order?: unknown } | undefined;
    if (auth && Array.isArray(auth.order))
      out.push(`  auth order     ${auth.order.join(", ") || "none (env or keyless)"}`);
    const notes = runtime.notes;
    if (Array.isArray(notes)) for (const note of notes) out.push(`  note           ${String(note)}`);
    out.push(`  queued         ${decisions.queuedMs} ms`);
    out.push("", ...formatSandbox(runtime.sandbox));
    out.push("", "Tool policy:");
    out.push(...decisions.toolPolicy.map((lineText) => `  ${lineText}`));
    out.push("", `Defaults: ${indentJson(decisions.defaults)}`);
  }
  out.push("", `Attempts (${report.attempts.length}):`);
  for (const a of report.attempts) {
    out.push(
      `  #${a.attempt} ${a.provider ?? "?"}/${a.model ?? "?"} thinking=${a.thinkingLevel ?? "-"}${a.authProfileId ? ` profile=${a.authProfileId}` : ""} → ${a.outcome ?? "?"}${a.reason ? ` (${a.reason}${a.action ? `, then ${a.action}` : ""})` : ""}${a.error ? `: ${a.error}` : ""}`,
    );
  }
  out.push("", formatFallback(report));
  if (report.compactions.length > 0) {
    out.push(`Compactions (${report.compactions.length}):`);
    for (const c of report.compactions) {
      out.push(
        `  ${c.attempt === undefined ? "" : `during attempt #${c.attempt}: `}${c.outcome === "compacted" ? "compacted" : "failed"}${c.reason ? ` (${c.reason})` : ""}${c.tokensBefore === undefined ? "" : `, ${c.tokensBefore} tokens before`}${c.errorMessage ? `: ${c.errorMessage}` : ""}`,
      );
    }
  } else out.push("Compactions: none");
  out.push("", `Model replies (${report.assistantMessages.length}):`);
  report.assistantMessages.forEach((m, i) => {
    const calls = m.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(", ");
    out.push(
      `  ${i + 1}. ${m.provider ?? "?"}/${m.model ?? "?"} ${m.stopReason}${m.text ? `: ${JSON.stringify(m.text.slice(0, 200))}` : ""}${calls ? ` tool calls: ${calls}` : ""}${m.errorMessage ? ` error: ${m.errorMessage}` : ""}`,
    );
  });
  out.push("", `Tool calls (${report.toolCalls.length}):`);
  for (const call of report.toolCalls) {
    out.push(
      `  ${call.name} ${JSON.stringify(call.args)} → ${call.isError ? "error" : "ok"}${call.text ? `: ${JSON.stringify(call.text.slice(0, 200))}` : ""}`,
    );
  }
  out.push("", `Events stored: ${report.eventCount}`);
  return out.join("\n");
}
