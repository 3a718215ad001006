// The auto-reply gateway's public shapes: its options, the gateway handle, what happened to one accepted
// message and a message handed to the busy-session queue. Owns: the types only. Does not own: any behaviour
// (gateway.ts and the modules it uses).
import type { ChannelAdapter, InboundMessage, OutboundMessage } from "@agent-kernel/channels-core";
import type { KernelConfig } from "@agent-kernel/config";
import type { AnyKernelStore, Kernel, KernelOptions, TurnOutcome } from "@agent-kernel/kernel";
import type { AUTO_REPLY_DELIVERY_POLICY, DeliveryLimitRecord } from "./delivery.ts";
import type { AccessHook, Route, RouteHook } from "./routing.ts";

/** What happened to one accepted message, for logs, tests and the parity harness. */
export interface HandledTurn {
  readonly inbound: InboundMessage;
  readonly route: Route;
  /** Absent when the turn could not be prepared (see `error`). */
  readonly outcome?: TurnOutcome;
  /** Everything sent to the channel for this message, in order (blocks, finals, the error message). */
  readonly sent: readonly OutboundMessage[];
  /** Texts the `message` tool sent during the turn. */
  readonly messageToolSends: readonly OutboundMessage[];
  /** Why the turn did not run or did not answer, as logged (never shown to the user as is). */
  readonly error?: string;
  /** Aborted by the gateway's shutdown after the grace period. */
  readonly interrupted: boolean;
  /** Set when the reply hit `channels.<id>.maxMessagesPerReply` (also the run's `delivery` event). */
  readonly deliveryLimit?: DeliveryLimitRecord;
}

/** A message whose session already had a turn running when it arrived (see `whenBusy`). */
export interface BusyMessage {
  readonly inbound: InboundMessage;
  readonly route: Route;
  readonly senderIsOwner: boolean;
}

export interface AutoReplyGatewayOptions {
  readonly config: KernelConfig;
  readonly stateDir: string;
  readonly channels: readonly ChannelAdapter[];
  /** A kernel to run turns on (over a store the caller owns); default one over the store at `stateDir`. */
  readonly kernel?: Kernel;
  /** The store under `kernel`, for pairing state; absent with a given kernel: pairing requests are refused. */
  readonly store?: AnyKernelStore;
  /** Settings of the kernel the gateway creates (tests shorten retries; benchmarks share model pools). */
  readonly kernelOptions?: Omit<KernelOptions, "config" | "store">;
  /** Default: `channels.<id>` policies (routing.ts); channels-core's access control plugs in here. */
  readonly access?: AccessHook;
  /** Default: `bindings` and `session.dmScope` (routing.ts); channels-core's routing plugs in here. */
  readonly route?: RouteHook;
  /** Sender ids that count as the owner (owner-only tools) besides `allowFrom`. */
  readonly ownerIds?: readonly string[];
  /** How often "typing…" is renewed while a turn runs (ms); default `agents.defaults.typingIntervalSeconds`. */
  readonly typingIntervalMs?: number;
  /** How long `stop()` lets running turns finish before aborting them (ms). Default 30 000. */
  readonly shutdownGraceMs?: number;
  readonly log?: (line: string) => void;
  readonly onTurnEnd?: (turn: HandledTurn) => void;
  /**
   * Takes a message whose session has a turn running (the gateway's follow-up queue: steered into that turn,
   * queued, collected or interrupting it, by queue mode). Resolves once the message is stored; then it leaves
   * the inbox. Absent: the message waits for its own turn behind the running one.
   */
  readonly whenBusy?: (message: BusyMessage) => Promise<void>;
}

export interface AutoReplyGateway {
  /** Opens the store (unless a kernel was given), replays the inbox, starts every channel. */
  start(): Promise<void>;
  /** Stops receiving, lets running turns finish (or interrupts them after the grace period), closes the store. */
  stop(): Promise<void>;
  /** Resolves once every accepted message has been handled (or left in the inbox by a shutdown). */
  idle(): Promise<void>;
  /** Aborts the running and queued turns of one session; returns the aborted run ids. */
  abortSession(sessionKey: string): string[];
  /** The kernel turns run on (after `start`). */
  readonly kernel: Kernel;
  readonly policy: typeof AUTO_REPLY_DELIVERY_POLICY;
}
