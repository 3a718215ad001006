// An inbound message as the follow-up runner takes it, and what is stored for it in the durable queue. Owns
// checking the input (a clear error naming the field, before anything is stored) and the stored payload
// shapes. Does not own: routing a channel message to a session (channels-core and the auto-reply app) or
// queue settings (the kernel resolves them for the session).
import { QUEUE_MODES } from "@agent-kernel/config";
import type { MessageContext } from "@agent-kernel/kernel";

export type QueueMode = (typeof QUEUE_MODES)[number];

export interface InboundMessage {
  /** Idempotency key: accepting the same id again stores nothing new. Default: a new UUID. */
  readonly id?: string | undefined;
  readonly text: string;
  /** Default: from the session key, else the default agent. */
  readonly agentId?: string | undefined;
  /** As the kernel takes it (`work`, `agent:main:work`); default the agent's main session. */
  readonly sessionKey?: string | undefined;
  readonly messageContext?: MessageContext | undefined;
  /** An inline `/queue <mode>` for this message: wins over the session and the config. */
  readonly queueMode?: QueueMode | undefined;
  /** Shown in a collect prompt as `(from <sender>)`; default `messageContext.senderId`. */
  readonly sender?: string | undefined;
}

/** Bad input to `accept`: nothing was stored. */
export class FollowupInputError extends Error {
  override readonly name = "FollowupInputError";
}

const ID_PATTERN = /^[^\s]{1,200}$/;

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new FollowupInputError(`${field}: expected a non-empty string, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Checks an inbound message; throws `FollowupInputError` naming the first bad field. */
export function validateInbound(raw: unknown): InboundMessage {
  if (typeof raw !== "object" || raw === null) {
    throw new FollowupInputError("inbound message: expected an object with at least `text`");
  }
  const input = raw as Record<string, unknown>;
  if (typeof input.text !== "string" || input.text.trim() === "") {
    throw new FollowupInputError("text: expected the message text (a non-empty string)");
  }
  const id = optionalString(input.id, "id");
  if (id !== undefined && !ID_PATTERN.test(id)) {
    throw new FollowupInputError(`id: expected 1-200 characters without spaces, got ${JSON.stringify(id)}`);
  }
  const queueMode = input.queueMode;
  if (queueMode !== undefined && !QUEUE_MODES.includes(queueMode as QueueMode)) {
    throw new FollowupInputError(
      `queueMode: expected one of ${QUEUE_MODES.join(", ")}, got ${JSON.stringify(queueMode)}`,
    );
  }
  const context = input.messageContext;
  if (context !== undefined && (typeof context !== "object" || context === null)) {
    throw new FollowupInputError("messageContext: expected an object");
  }
  return {
    text: input.text,
    ...(id === undefined ? {} : { id }),
    ...(optionalString(input.agentId, "agentId") === undefined ? {} : { agentId: input.agentId as string }),
    ...(optionalString(input.sessionKey, "sessionKey") === undefined
      ? {}
      : { sessionKey: input.sessionKey as string }),
    ...(context === undefined ? {} : { messageContext: context as MessageContext }),
    ...(queueMode === undefined ? {} : { queueMode: queueMode as QueueMode }),
    ...(optionalString(input.sender, "sender") === undefined ? {} : { sender: input.sender as string }),
  };
}

/** Stored queue item kinds. */
export const ITEM_KIND = {
  message: "followup.message",
  /** The one-line summary of a message dropped by the cap (`drop: summarize`), for the next turn. */
  summary: "followup.summary",
} as const;

export interface MessagePayload {
  readonly text: string;
  readonly sender?: string;
  readonly messageContext?: MessageContext;
  readonly queueMode?: QueueMode;
  readonly receivedAt: number;
}

export interface SummaryPayload {
  readonly droppedItemId: string;
  readonly line: string;
}

/** The route a message came from: collect merges only consecutive messages of one route (OpenClaw). */
export function routeKey(payload: MessagePayload): string {
  const context = payload.messageContext;
  return [context?.channel ?? "", context?.accountId ?? "", context?.to ?? "", context?.threadId ?? ""].join(
    "\u0000",
  );
}
