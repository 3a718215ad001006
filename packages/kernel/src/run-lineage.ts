// Which runs a run started: the `sessions_spawn` and `sessions_send` calls among its recorded tool calls whose
// answer names a run (`runs show` lists them; the child names its parent in its decisions' `parentRunId`).
// Owns: reading those answers back. Does not own: recording them (the tools' JSON answers,
// turn-pipeline's session-agent-tools.ts) or the rest of a run's report (admin.ts).

/** A run started by another run's tool call. */
export interface ChildRunRef {
  readonly tool: "sessions_spawn" | "sessions_send";
  readonly runId: string;
  readonly sessionKey: string;
  /** The tool's answer: `accepted`, `ok`, `timeout`, `error`. */
  readonly status: string;
}

const LINEAGE_TOOLS = new Set(["sessions_spawn", "sessions_send"]);

/** The child runs named by `sessions_spawn` / `sessions_send` answers, in call order. */
export function childRunsOf(
  toolCalls: readonly { readonly name: string; readonly text?: string | undefined }[],
): ChildRunRef[] {
  const children: ChildRunRef[] = [];
  for (const call of toolCalls) {
    if (!LINEAGE_TOOLS.has(call.name) || call.text === undefined) continue;
    let answer: unknown;
    try {
      answer = JSON.parse(call.text);
    } catch {
      continue;
    }
    if (typeof answer !== "object" || answer === null) continue;
    const { runId, status } = answer as Record<string, unknown>;
    const sessionKey =
      (answer as Record<string, unknown>).childSessionKey ?? (answer as Record<string, unknown>).sessionKey;
    if (typeof runId !== "string" || typeof sessionKey !== "string") continue;
    children.push({
      tool: call.name as ChildRunRef["tool"],
      runId,
      sessionKey,
      status: typeof status === "string" ? status : "?",
    });
  }
  return children;
}
