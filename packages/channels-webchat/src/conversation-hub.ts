// Per-conversation event streams for the web chat: numbered events (`block`, `message`, `typing`, `edit`), a
// bounded backlog per conversation so a client that reconnects with `Last-Event-ID` gets what it missed, and
// the live subscribers. Owns ordering, the backlog bound and eviction of idle conversations. Does not own
// HTTP (channel.ts writes the frames) nor authentication.

export type WebchatEventType = "block" | "message" | "typing" | "edit";

export interface WebchatEvent {
  /** Increasing within its conversation, starting at 1. */
  readonly id: number;
  readonly type: WebchatEventType;
  readonly data: Readonly<Record<string, unknown>>;
}

export type Subscriber = (event: WebchatEvent) => void;

const frames = new WeakMap<WebchatEvent, string>();

/** The event as one SSE frame, serialised once however many subscribers write it. */
export function sseFrame(event: WebchatEvent): string {
  let frame = frames.get(event);
  if (frame === undefined) {
    // JSON.stringify never emits a raw newline, so one data line carries the whole event
    frame = `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
    frames.set(event, frame);
  }
  return frame;
}

interface Conversation {
  nextId: number;
  readonly backlog: WebchatEvent[];
  readonly subscribers: Set<Subscriber>;
}

export interface ConversationHubOptions {
  /** Events kept per conversation for `Last-Event-ID` resume (default 200). */
  readonly backlogSize?: number;
  /** Conversations kept; the least recently used one without subscribers is dropped first (default 1000). */
  readonly maxConversations?: number;
}

export class ConversationHub {
  readonly #backlogSize: number;
  readonly #maxConversations: number;
  // Map order is recency: every touch re-inserts the conversation at the end
  readonly #conversations = new Map<string, Conversation>();

  constructor(options: ConversationHubOptions = {}) {
    this.#backlogSize = Math.max(1, options.backlogSize ?? 200);
    this.#maxConversations = Math.max(1, options.maxConversations ?? 1000);
  }

  publish(conversationId: string, type: WebchatEventType, data: Record<string, unknown>): WebchatEvent {
    const conversation = this.#touch(conversationId);
    const event: WebchatEvent = { id: conversation.nextId++, type, data };
    conversation.backlog.push(event);
    if (conversation.backlog.length > this.#backlogSize) conversation.backlog.shift();
    for (const subscriber of conversation.subscribers) subscriber(event);
    return event;
  }

  /**
   * Subscribes to a conversation; when `afterId` is given, first replays the backlog events after it (those
   * still kept: a client that was away for longer than the backlog misses the oldest ones).
   */
  subscribe(conversationId: string, subscriber: Subscriber, afterId?: number): () => void {
    const conversation = this.#touch(conversationId);
    if (afterId !== undefined) {
      // an id from the future means the conversation was evicted and restarted: replay all that is kept
      const after = afterId > conversation.nextId - 1 ? 0 : afterId;
      for (const event of conversation.backlog) if (event.id > after) subscriber(event);
    }
    conversation.subscribers.add(subscriber);
    return () => {
      conversation.subscribers.delete(subscriber);
    };
  }

  /** The id of the newest event of a conversation (0 when none). */
  lastId(conversationId: string): number {
    return (this.#conversations.get(conversationId)?.nextId ?? 1) - 1;
  }

  get conversationCount(): number {
    return this.#conversations.size;
  }

  #touch(conversationId: string): Conversation {
    let conversation = this.#conversations.get(conversationId);
    if (conversation) {
      this.#conversations.delete(conversationId);
    } else {
      conversation = { nextId: 1, backlog: [], subscribers: new Set() };
    }
    this.#conversations.set(conversationId, conversation);
    if (this.#conversations.size > this.#maxConversations) this.#evict();
    return conversation;
  }

  #evict(): void {
    for (const [id, conversation] of this.#conversations) {
      if (this.#conversations.size <= this.#maxConversations) return;
      if (conversation.subscribers.size === 0) this.#conversations.delete(id);
    }
  }
}
