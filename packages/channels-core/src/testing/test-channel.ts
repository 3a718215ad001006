// An in-memory channel for tests, the apps and the parity harness: drive inbound messages with `receive`,
// read what was sent from `sent`, with no network. Owns: a faithful `ChannelAdapter` (start/stop lifecycle,
// limits and formatting through `formatAndSplit`, edits, typing, scripted failures). Does not own: any real
// channel's behaviour.
import type {
  ChannelAdapter,
  ChannelCapabilities,
  ChannelStartOptions,
  InboundHandler,
  InboundMessage,
  OutboundMessage,
  OutboundTarget,
  SendResult,
  SentMessage,
} from "../contract.ts";
import { formatAndSplit } from "../format.ts";
import { validateInboundMessage } from "../inbound.ts";

/** One message the test channel accepted, as the channel would show it. */
export interface CapturedMessage extends SentMessage {
  readonly accountId: string;
  /** The formatted text of this part ("" for a media-only message). */
  readonly text: string;
  readonly media: OutboundMessage["media"];
  readonly replyToMessageId?: string;
  readonly isBlock: boolean;
}

/** The id, account and capabilities of a `TestChannel` (defaults: `test`, `default`, Markdown at 4000). */
export interface TestChannelOptions {
  readonly id?: string;
  readonly accountId?: string;
  readonly capabilities?: Partial<ChannelCapabilities>;
}

/** An inbound message for `TestChannel.receive`: only `text` is required, the rest defaults to a DM from `u1`. */
export type InboundDraft = Partial<Omit<InboundMessage, "conversation" | "sender">> & {
  readonly text: string;
  readonly conversation?: Partial<InboundMessage["conversation"]>;
  readonly sender?: Partial<InboundMessage["sender"]>;
};

/** An in-memory `ChannelAdapter` for tests: `receive` drives inbound messages, `sent` and `texts()` show what was sent. */
export class TestChannel implements ChannelAdapter {
  readonly id: string;
  readonly accountId: string;
  readonly capabilities: ChannelCapabilities;
  /** Every message sent, in order (a long text is several). */
  readonly sent: CapturedMessage[] = [];
  readonly typing: OutboundTarget[] = [];
  readonly edits: { readonly target: OutboundTarget; readonly messageId: string; readonly text: string }[] =
    [];
  #handler: InboundHandler | undefined;
  #inFlight = new Set<Promise<void>>();
  #nextId = 1;
  #failures: Error[] = [];

  constructor(options: TestChannelOptions = {}) {
    this.id = options.id ?? "test";
    this.accountId = options.accountId ?? "default";
    this.capabilities = {
      threads: true,
      edits: true,
      typing: true,
      media: true,
      reactions: false,
      maxTextLength: 4000,
      dialect: "markdown",
      ...options.capabilities,
    };
  }

  get started(): boolean {
    return this.#handler !== undefined;
  }

  async start(options: ChannelStartOptions): Promise<void> {
    if (this.#handler !== undefined) throw new Error(`${this.id}: already started`);
    this.#handler = options.onMessage;
    options.signal?.addEventListener("abort", () => void this.stop(), { once: true });
  }

  async stop(): Promise<void> {
    this.#handler = undefined;
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Makes the next `send`s throw these errors, in order (e.g. a `ChannelError` with `retryAfterMs`). */
  failNextSends(...errors: Error[]): void {
    this.#failures.push(...errors);
  }

  /** Delivers an inbound message (filled with defaults) to the handler and waits for it. */
  async receive(draft: InboundDraft): Promise<InboundMessage> {
    const handler = this.#handler;
    if (handler === undefined) throw new Error(`${this.id}: receive() before start()`);
    const message = validateInboundMessage(this.inbound(draft));
    const handled = handler(message);
    this.#inFlight.add(handled);
    try {
      await handled;
    } finally {
      this.#inFlight.delete(handled);
    }
    return message;
  }

  /** A complete inbound message from a draft: a DM from user `u1` unless said otherwise. */
  inbound(draft: InboundDraft): InboundMessage {
    const { conversation, sender, ...rest } = draft;
    return {
      channel: this.id,
      accountId: this.accountId,
      messageId: `in-${this.#nextId++}`,
      media: [],
      mentions: [],
      mentionsBot: false,
      timestamp: Date.now(),
      ...rest,
      conversation: { chatType: "direct", chatId: sender?.id ?? "u1", ...conversation },
      sender: { id: "u1", ...sender },
    };
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    const failure = this.#failures.shift();
    if (failure !== undefined) throw failure;
    const { target } = message;
    const parts =
      message.text === undefined || message.text === ""
        ? []
        : formatAndSplit(message.text, this.capabilities.dialect, this.capabilities.maxTextLength);
    if (parts.length === 0 && (message.media?.length ?? 0) > 0) parts.push("");
    const messages: SentMessage[] = parts.map((text, index) => {
      const sent: CapturedMessage = {
        messageId: `out-${this.#nextId++}`,
        chatId: target.chatId,
        accountId: target.accountId,
        text,
        media: index === parts.length - 1 ? message.media : undefined,
        isBlock: message.isBlock === true,
        ...(target.threadId === undefined ? {} : { threadId: target.threadId }),
        ...(target.replyToMessageId === undefined || index > 0
          ? {}
          : { replyToMessageId: target.replyToMessageId }),
      };
      this.sent.push(sent);
      return {
        messageId: sent.messageId,
        chatId: sent.chatId,
        ...(sent.threadId === undefined ? {} : { threadId: sent.threadId }),
      };
    });
    return { messages };
  }

  async sendTyping(target: OutboundTarget): Promise<void> {
    this.typing.push(target);
  }

  async edit(target: OutboundTarget, messageId: string, text: string): Promise<void> {
    const index = this.sent.findIndex((m) => m.messageId === messageId);
    const original = this.sent[index];
    if (original === undefined) throw new Error(`${this.id}: no sent message ${messageId} to edit`);
    this.sent[index] = { ...original, text };
    this.edits.push({ target, messageId, text });
  }

  /** The texts sent so far, in order. */
  texts(): string[] {
    return this.sent.map((m) => m.text);
  }
}
