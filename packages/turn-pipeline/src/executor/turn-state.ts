// What the parts of one turn share: its inputs, event log, limits and stop cause (`TurnScope`), and the tally
// its attempts build up (`TurnState`): the attempt records, the payloads, the usage, the text, compactions,
// who answered, and how the turn ends (status, reason, error message). Owns: those shapes, the tally's start
// and adding one message's usage. Does not own: deciding any of it (attempt-outcome.ts, recovery.ts) or
// storing it (run-record.ts).
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { ReplyPayload } from "../streaming/index.ts";
import type { TurnEventLog } from "./event-bridge.ts";
import type { TurnLimits } from "./turn-limits.ts";
import type { TurnStopper } from "./turn-stop.ts";
import type { AttemptRecord, TurnContext, TurnRequest, TurnStatus, TurnUsage } from "./types.ts";
import type { WarmAgentSession } from "./warm-agent-sessions.ts";

/** The model (and auth profile) that answered the turn. */
export interface AnsweredBy {
  readonly provider: string;
  readonly model: string;
  readonly profileId?: string | undefined;
}

export interface TurnState {
  readonly attempts: AttemptRecord[];
  readonly payloads: ReplyPayload[];
  /** Texts the `message` tool sent (the reply leaves out what they already said). */
  readonly messagingTexts: string[];
  usage: TurnUsage;
  finalText: string;
  partial: boolean;
  status: TurnStatus;
  reason: string | undefined;
  errorMessage: string | undefined;
  compactions: number;
  answered: AnsweredBy | undefined;
  /** A transcript write refused before a model request: what the attempt reports (pi only sees its effects). */
  storeFailure: Error | undefined;
  /** The session of a turn answered at its first attempt: kept for the session's next turn once settled. */
  keepable: WarmAgentSession | undefined;
}

/** One turn: what every part of it reads, and its tally. */
export interface TurnScope {
  readonly context: TurnContext;
  readonly request: TurnRequest;
  readonly runId: string;
  readonly now: () => number;
  readonly log: TurnEventLog;
  readonly limits: TurnLimits;
  readonly stopper: TurnStopper;
  readonly state: TurnState;
}

/** A turn that has not run an attempt yet: nothing gathered, an error unless something ends it otherwise. */
export function newTurnState(): TurnState {
  return {
    attempts: [],
    payloads: [],
    messagingTexts: [],
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, costUsd: 0 },
    finalText: "",
    partial: false,
    status: "error",
    reason: undefined,
    errorMessage: undefined,
    compactions: 0,
    answered: undefined,
    storeFailure: undefined,
    keepable: undefined,
  };
}

export function addUsage(total: TurnUsage, message: AssistantMessage): TurnUsage {
  const usage = message.usage;
  return {
    input: total.input + (usage?.input ?? 0),
    output: total.output + (usage?.output ?? 0),
    cacheRead: total.cacheRead + (usage?.cacheRead ?? 0),
    cacheWrite: total.cacheWrite + (usage?.cacheWrite ?? 0),
    total: total.total + (usage?.totalTokens ?? 0),
    costUsd: total.costUsd + (usage?.cost?.total ?? 0),
  };
}
