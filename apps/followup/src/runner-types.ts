// The follow-up runner's public shapes: the settings it applies to a session, the events it emits, what
// `accept` and `drain` return and the options `createFollowupRunner` takes. Owns: the types only. Does not
// own: any behaviour (runner.ts) or the queue's stored payloads (inbound.ts).
import type { KernelConfig } from "@agent-kernel/config";
import type { AnyKernelStore, Kernel, KernelOptions, TurnOutcome, TurnStatus } from "@agent-kernel/kernel";
import type { Clock } from "./clock.ts";
import type { QueueMode } from "./inbound.ts";

type QueueApi = AnyKernelStore["queue"];
export type QueueItem = NonNullable<Awaited<ReturnType<QueueApi["get"]>>>;
export type ReplyPayload = TurnOutcome["result"]["payloads"][number];

/** The queue settings that apply to a session (the kernel's resolution, with the config's debounce). */
export interface FollowupSettings {
  readonly mode: QueueMode;
  readonly debounceMs: number;
  readonly cap: number;
  readonly dropPolicy: "summarize" | "old" | "new";
}

export type DropReason = "cap-old" | "cap-summarize" | "cap-new" | "interrupt";

export type FollowupEvent =
  /** A follow-up turn ended: what to deliver, and the whole outcome. */
  | {
      readonly type: "delivered";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemIds: readonly string[];
      readonly runId: string;
      readonly status: TurnStatus;
      readonly prompt: string;
      readonly payloads: readonly ReplyPayload[];
      readonly outcome: TurnOutcome;
    }
  /** A message reached a running turn by steering; no turn of its own. */
  | {
      readonly type: "steered";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemId: string;
    }
  /** A message was dropped (by the cap, or superseded by an interrupt) or refused (`drop: new`). */
  | {
      readonly type: "dropped";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemId: string;
      readonly reason: DropReason;
    }
  /** Items handed back to the queue (pending again, at their place) because the runner stopped mid-turn. */
  | {
      readonly type: "released";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemIds: readonly string[];
    }
  /** Items whose run had already ended before a crash: completed now, not run again. */
  | {
      readonly type: "recovered";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemIds: readonly string[];
      readonly runId: string;
    }
  | {
      readonly type: "error";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemIds: readonly string[];
      readonly error: unknown;
    };

export type FollowupEventType = FollowupEvent["type"];

export interface AcceptResult {
  /** `queued`: stored (and being steered when `steering` is set); `refused`: the cap with `drop: new`;
   * `duplicate`: an item with this id was already accepted (nothing new stored). */
  readonly status: "queued" | "refused" | "duplicate";
  readonly itemId: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly settings: FollowupSettings;
  /** A turn was running (or queued) for the session when the message arrived. */
  readonly busy: boolean;
  /** Items dropped to make room (oldest first), or superseded by an interrupt. */
  readonly dropped: readonly string[];
  /** Steer mode on a busy session: true once the message reached the running turn, false when it fell back
   * to a follow-up turn. */
  readonly steering?: Promise<boolean>;
}

export interface DrainReport {
  /** Turns run. */
  readonly turns: number;
  /** Items completed by those turns (and by recovery). */
  readonly items: number;
}

export interface FollowupRunnerOptions {
  readonly config: KernelConfig;
  /** Default `config.store.stateDir`. Ignored when `store` is given. */
  readonly stateDir?: string | undefined;
  /** An open store (the caller closes it); default one opened under the state dir (closed by `stop`). */
  readonly store?: AnyKernelStore | undefined;
  /** A kernel over `store` (then `store` is required); default one made here. */
  readonly kernel?: Kernel | undefined;
  /** Extra options for the kernel made here (paths, executor settings, native providers). */
  readonly kernelOptions?: Partial<Omit<KernelOptions, "config" | "store">> | undefined;
  readonly clock?: Clock | undefined;
  /** This worker's name in claims; default `<host>:<pid>:<random>`. */
  readonly owner?: string | undefined;
  /** How long a claim holds before another worker may take the item over (ms); default 15 minutes. */
  readonly leaseMs?: number | undefined;
}
