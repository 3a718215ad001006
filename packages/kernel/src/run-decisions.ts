// What a run records as the decisions made for it (its event 0): the runtime record (JSON-safe, secret-free),
// the tool-policy lines, the defaults and the queue wait — plus the tool policy of the turn (re-resolved only
// when `ownerNumbers` changes who counts as the owner). Does not own: storing the decisions (the executor's
// finishing transaction through executor-store.ts, else the kernel or run-outcome.ts), nor resolving the
// runtime or the preparation's policy (prepare.ts).
import { formatToolDecision, resolveToolPolicy, type ToolPolicy } from "@agent-kernel/tool-policy";
import type { PreparedSession, RunDecisions, TurnInput } from "./types.ts";

/** The runtime decisions as stored: JSON-safe, secret-free (profiles carry only `hasSecret`). */
function runtimeRecord(prepared: PreparedSession): Record<string, unknown> {
  const runtime = prepared.runtimeContext;
  const model = runtime.piModel.value;
  return {
    agentId: runtime.agentId,
    sessionKey: runtime.sessionKey,
    sessionId: runtime.sessionId,
    workspaceDir: runtime.workspaceDir,
    agentDir: runtime.agentDir,
    model: runtime.model,
    piModel: {
      source: runtime.piModel.source,
      provider: model.provider,
      id: model.id,
      api: model.api,
      contextWindow: model.contextWindow,
    },
    candidates: runtime.candidates,
    authProfile: runtime.authProfile,
    thinking: runtime.thinking,
    contextTokens: runtime.contextTokens,
    timeoutMs: runtime.timeoutMs,
    queue: runtime.queue,
    sandbox: runtime.sandbox,
    notes: runtime.notes,
  };
}

/**
 * `value` as JSON text in ASCII: what `JSON.stringify` gives with every other character escaped (`\u2014`),
 * the same JSON value. ASCII text stays one byte a character in V8 and is its own UTF-8: the tool-policy lines'
 * "—" and "…" would otherwise make every string built from it two-byte, converted again at each write.
 */
function asciiJson(value: unknown): string {
  return (JSON.stringify(value) ?? "null").replace(NOT_ASCII, escapeCharacter);
}
const NOT_ASCII = /[\u0080-\uffff]/g;
function escapeCharacter(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** What every turn of a preparation records alike, made once (the JSON texts when first stored). */
interface Recorded {
  readonly runtime: Record<string, unknown>;
  readonly toolLines: readonly string[];
  runtimeJson?: string;
  toolLinesJson?: string;
  defaultsJson?: string;
}

/** One per kernel: the decisions of its runs, with what every turn of a preparation records alike made once. */
export class RunDecisionMaker {
  /** Per preparation: what every one of its turns records alike (the runtime record, the tool lines). */
  readonly #recorded = new WeakMap<PreparedSession, Recorded>();

  /** What every turn of `prepared` records alike, made once per preparation (it is immutable). */
  #recordedFor(prepared: PreparedSession) {
    let recorded = this.#recorded.get(prepared);
    if (recorded === undefined) {
      recorded = {
        runtime: runtimeRecord(prepared),
        toolLines: prepared.toolDecisions.map(formatToolDecision),
      };
      this.#recorded.set(prepared, recorded);
    }
    return recorded;
  }

  decisions(
    prepared: PreparedSession,
    queuedMs: number,
    toolLines: readonly string[],
    run: {
      readonly parentRunId?: string | undefined;
      /** The turn's policy and the kernel's per-run tools (`turnTools`), explained after the default tools'. */
      readonly policy?: ToolPolicy | undefined;
      readonly extraTools?: readonly { readonly name: string }[] | undefined;
    } = {},
  ): RunDecisions {
    const { parentRunId, policy, extraTools } = run;
    const extraLines =
      policy === undefined || extraTools === undefined || extraTools.length === 0
        ? []
        : policy.explain(extraTools.map((tool) => tool.name)).map(formatToolDecision);
    return {
      ...(parentRunId === undefined ? {} : { parentRunId }),
      phase: "prepared",
      entryPoint: prepared.defaults.entryPoint,
      queuedMs: Math.round(queuedMs * 1000) / 1000,
      runtime: this.#recordedFor(prepared).runtime,
      toolPolicy: extraLines.length === 0 ? toolLines : [...toolLines, ...extraLines],
      defaults: prepared.defaults,
    };
  }

  /**
   * `decisions` (made by `decisions` for `prepared`) as the JSON text of its event 0, in ASCII: the same value
   * as `JSON.stringify(decisions)` in the same key order, its parts every turn of the preparation shares
   * serialised once (the runtime record, the default tool lines, the defaults: ≈ 2.4 KB of ≈ 2.5).
   */
  json(prepared: PreparedSession, decisions: RunDecisions): string {
    const recorded = this.#recordedFor(prepared);
    recorded.runtimeJson ??= asciiJson(decisions.runtime);
    recorded.defaultsJson ??= asciiJson(decisions.defaults);
    recorded.toolLinesJson ??= asciiJson(recorded.toolLines);
    const toolPolicy =
      decisions.toolPolicy === recorded.toolLines ? recorded.toolLinesJson : asciiJson(decisions.toolPolicy);
    const parent =
      decisions.parentRunId === undefined ? "" : `"parentRunId":${asciiJson(decisions.parentRunId)},`;
    return (
      `{${parent}"phase":"prepared","entryPoint":${asciiJson(decisions.entryPoint)},` +
      `"queuedMs":${JSON.stringify(decisions.queuedMs)},"runtime":${recorded.runtimeJson},` +
      `"toolPolicy":${toolPolicy},"defaults":${recorded.defaultsJson}}`
    );
  }

  /** The policy for this turn: re-resolved only when `ownerNumbers` changes who counts as the owner. */
  policyFor(prepared: PreparedSession, turn: TurnInput) {
    const sender = prepared.session.messageContext?.senderId;
    if (turn.ownerNumbers === undefined || sender === undefined) {
      return { policy: prepared.toolPolicy, lines: this.#recordedFor(prepared).toolLines };
    }
    const isOwner = turn.ownerNumbers.includes(sender);
    if (prepared.toolPolicyContext.senderIsOwner === isOwner) {
      return { policy: prepared.toolPolicy, lines: this.#recordedFor(prepared).toolLines };
    }
    const policy = resolveToolPolicy(prepared.config, {
      ...prepared.toolPolicyContext,
      senderIsOwner: isOwner,
    });
    return {
      policy,
      lines: policy.explain(prepared.toolDecisions.map((decision) => decision.tool)).map(formatToolDecision),
    };
  }
}
