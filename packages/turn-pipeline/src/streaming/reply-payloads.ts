// From a piece of reply text to the payload a channel delivers: reply directives parsed, silent replies and
// replies the `message` tool already sent dropped (toReplyPayload), and a block's directive-only chunk carried
// to the next block (BlockDirectiveCarry). Does not own where the pieces come from (reply-stream.ts: a block,
// a message's final text).
import { isMessagingToolDuplicate } from "./messaging-dedupe.ts";
import { parseReplyDirectives } from "./reply-directives.ts";
import type { ReplyPayload } from "./reply-payload.ts";

export type ReplyPayloadOptions = {
  readonly currentMessageId?: string | undefined;
  readonly silentToken: string;
  /** Texts the `message` tool already sent in this turn. */
  readonly messagingToolSentTexts?: (() => readonly string[]) | undefined;
};

/** What puts a skeleton's paragraphs back (FinalTextSkeleton): see parseReplyDirectives' `expandText`/`expandedHead`. */
export type TextExpander = {
  expand(text: string): string;
  expandedHead(text: string): string;
};

/** The payload of `text`, or undefined when there is nothing to deliver. `expander`: see parseReplyDirectives. */
export function toReplyPayload(
  text: string,
  options: ReplyPayloadOptions,
  expander?: TextExpander,
): ReplyPayload | undefined {
  const parsed = parseReplyDirectives(
    text,
    expander
      ? {
          currentMessageId: options.currentMessageId,
          silentToken: options.silentToken,
          expandText: (skeleton) => expander.expand(skeleton),
          expandedHead: (skeleton) => expander.expandedHead(skeleton),
        }
      : { currentMessageId: options.currentMessageId, silentToken: options.silentToken },
  );
  if (parsed.isSilent) return undefined;
  if (!parsed.text && !parsed.mediaUrls?.length) return undefined;
  const sent = options.messagingToolSentTexts?.();
  if (sent && parsed.text && !parsed.mediaUrls?.length && isMessagingToolDuplicate(parsed.text, sent))
    return undefined;
  // key by key, without object spreads (once per block)
  const payload: ReplyPayload = {};
  if (parsed.text) payload.text = parsed.text;
  if (parsed.mediaUrls?.length) payload.mediaUrls = parsed.mediaUrls;
  if (parsed.replyToId !== undefined) payload.replyToId = parsed.replyToId;
  if (parsed.replyToCurrent) payload.replyToCurrent = true;
  if (parsed.audioAsVoice) payload.audioAsVoice = true;
  return payload;
}

/**
 * Blocks to payloads: a block with only directives delivers nothing, and its reply target and voice flag carry
 * to the next block (its source text too, so the next block's `sourceText` covers both).
 */
export class BlockDirectiveCarry {
  readonly #options: ReplyPayloadOptions;
  #heldDirectives: ReplyPayload = {};
  #heldSource = "";

  constructor(options: ReplyPayloadOptions) {
    this.#options = options;
  }

  /** The block's payload and source text, or undefined when it delivers nothing (its directives are kept). */
  take(text: string, chunkSource: string): { payload: ReplyPayload; sourceText: string } | undefined {
    const parsed = toReplyPayload(text.trimEnd(), this.#options);
    const sourceText = this.#heldSource + chunkSource;
    if (!parsed) {
      const directives = parseReplyDirectives(text, { currentMessageId: this.#options.currentMessageId });
      if (directives.replyToTag || directives.audioAsVoice) {
        this.#heldDirectives = {
          ...this.#heldDirectives,
          ...(directives.replyToId !== undefined ? { replyToId: directives.replyToId } : {}),
          ...(directives.replyToCurrent ? { replyToCurrent: true } : {}),
          ...(directives.audioAsVoice ? { audioAsVoice: true } : {}),
        };
      }
      this.#heldSource = sourceText;
      return undefined;
    }
    const held = this.#heldDirectives;
    const payload =
      held.replyToId === undefined && !held.replyToCurrent && !held.audioAsVoice
        ? parsed
        : { ...held, ...parsed };
    this.#heldDirectives = {};
    this.#heldSource = "";
    return { payload, sourceText };
  }
}
