// The parity harness's shapes: a scenario (config, inbound messages, the scripted model, faults), an app's
// declared delivery policy, what one scenario × app cell produced, and its verdict. Owns only shapes; the
// loader checks scenario files (scenarios.ts), the adapters run apps (apps/*.ts).
import type { Step } from "@agent-kernel/fake-llm";

/** A rule of the scripted model: answers requests made with one auth profile and/or for one model. */
export interface ScenarioModelRule {
  /** The auth profile id (`scripted:<name>`) whose key the request carries; absent: the provider's own key. */
  readonly profile?: string;
  /** The model id the request names (`m1`, `m2`). */
  readonly model?: string;
  readonly steps: readonly Step[];
}

export interface ScenarioInbound {
  readonly text: string;
  /** Sent together with the previous message, without waiting for its reply (lane serialisation). */
  readonly concurrentWithPrevious?: boolean;
}

export interface ParityScenario {
  /** The file name without `.json`. */
  readonly name: string;
  readonly description: string;
  /** What the scenario covers, for the report (`plain`, `tools`, `fault:rate_limit`, ...). */
  readonly covers: readonly string[];
  /** Merged into the harness's base config (deep merge of plain objects). */
  readonly config?: Readonly<Record<string, unknown>>;
  /** Auth profiles of the scripted provider, by name; each gets its own key. */
  readonly profiles?: readonly string[];
  readonly model: readonly ScenarioModelRule[];
  readonly inbound: readonly ScenarioInbound[];
  /** Abort the turn once this many model requests arrived (the abort scenario). */
  readonly abortAfterRequests?: number;
  /** Files to create in the workspace before the turns. */
  readonly workspace?: Readonly<Record<string, string>>;
  /** Offers the `message` tool: only apps whose policy has a message sink take part. */
  readonly needsMessageTool?: boolean;
  /** Sanity checks on the kernel outcome, whatever the app: each run's status, in order. */
  readonly expectStatuses: readonly string[];
}

/**
 * How an app delivers a turn: the same choices `@agent-kernel/auto-reply` exports as `DeliveryPolicy`, plus
 * what the harness needs to drive the app. docs/entry-points.md is the table of these.
 */
export interface AppDeliveryPolicy {
  readonly app: string;
  readonly streaming: "blocks" | "partials" | "none";
  readonly final: "all" | "unstreamed" | "last" | "json" | "none";
  readonly errors: "user-message" | "stderr-and-exit-code" | "dropped" | "status-error" | "null-plan";
  readonly silent: "suppressed";
  readonly messagingToolDedupe: boolean;
  readonly replyThreading: boolean;
  readonly typing: boolean;
  /** The app offers the `message` tool (it has a conversation to send to). */
  readonly messageTool: boolean;
}

/** One thing an app delivered, normalised (ids and paths replaced by placeholders). */
export type Delivered =
  | {
      readonly kind: "channel";
      readonly text?: string;
      readonly media?: readonly string[];
      readonly isBlock?: boolean;
      /** `<inbound:N>` for the Nth inbound message, else the id as given. */
      readonly replyTo?: string;
    }
  | { readonly kind: "stdout" | "stderr"; readonly text: string }
  /** A progress line outside the reply and the error report (the agent's recovery notices on stderr). */
  | { readonly kind: "notice"; readonly text: string }
  | { readonly kind: "exit"; readonly code: number }
  | { readonly kind: "typing" }
  | { readonly kind: "result"; readonly value: unknown };

/** What one app did with one scenario. */
export interface CellRun {
  /** The state dir the app wrote its store to (the harness reads the kernel outcome from it). */
  readonly stateDir: string;
  readonly delivered: readonly Delivered[];
  /** Run-ids of the turns, as the app reported them (optional: the store is the authority). */
  readonly notes?: readonly string[];
}

export type CellStatus = "pass" | "fail" | "not wired" | "not applicable";

export interface CellResult {
  readonly scenario: string;
  readonly app: string;
  readonly status: CellStatus;
  readonly problems: readonly string[];
  readonly notes: readonly string[];
  readonly kernel?: unknown;
  readonly delivered?: readonly Delivered[];
  readonly ms: number;
}
