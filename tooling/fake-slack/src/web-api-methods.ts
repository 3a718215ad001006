// The Web API methods the adapter uses, answered as Slack answers them: the token check (`not_authed`,
// `invalid_auth`), auth.test, chat.postMessage and chat.update (40000-character limit, blocks/attachments
// format errors), reactions.add, and the dispatch to the file methods (file-uploads.ts) and
// apps.connections.open (socket-mode.ts). Owns the posted messages and their `ts`; does not own HTTP,
// parameter decoding or faults (http-front.ts, request-params.ts, faults.ts).
import type { FileUploads } from "./file-uploads.ts";
import type { SlackIdentity } from "./identity.ts";
import { invalidJsonFields, type SlackParams, stringParam } from "./request-params.ts";
import type { SocketMode } from "./socket-mode.ts";

/** Slack's hard limit on `text` in chat.postMessage / chat.update. */
export const SLACK_MAX_TEXT = 40_000;

export interface PostedMessage {
  readonly channel: string;
  readonly ts: string;
  text: string;
  readonly threadTs?: string;
  readonly blocks?: unknown;
  readonly mrkdwn?: boolean;
  readonly edits: string[];
}

const METHODS_WITHOUT_AUTH = new Set<string>();

export class WebApiMethods {
  /** Every message the bot posted, in order; a live array. */
  readonly messages: PostedMessage[] = [];
  readonly #identity: SlackIdentity;
  readonly #uploads: FileUploads;
  readonly #socketMode: SocketMode;
  #tsCounter = 0;

  constructor(identity: SlackIdentity, uploads: FileUploads, socketMode: SocketMode) {
    this.#identity = identity;
    this.#uploads = uploads;
    this.#socketMode = socketMode;
  }

  /** Runs `method` for the caller presenting `token`; the answer is always an `{ok,…}` object. */
  handle(method: string, params: SlackParams, token: string | undefined): SlackParams {
    if (method === "apps.connections.open") return this.#socketMode.openConnection(token);
    if (!METHODS_WITHOUT_AUTH.has(method)) {
      if (!token) return { ok: false, error: "not_authed" };
      if (token !== this.#identity.botToken) return { ok: false, error: "invalid_auth" };
    }
    switch (method) {
      case "auth.test":
        return {
          ok: true,
          url: "https://fake.slack.com/",
          team: "Fake Team",
          user: "bot",
          team_id: this.#identity.teamId,
          user_id: this.#identity.botUserId,
          bot_id: this.#identity.botId,
        };
      case "chat.postMessage":
        return this.#postMessage(params);
      case "chat.update":
        return this.#update(params);
      case "files.getUploadURLExternal":
        return this.#uploads.getUploadURLExternal(params);
      case "files.completeUploadExternal":
        return this.#uploads.completeUploadExternal(params);
      case "files.upload":
        return this.#uploads.filesUpload(params);
      case "reactions.add": {
        const channel = stringParam(params, "channel");
        const ts = stringParam(params, "timestamp");
        const name = stringParam(params, "name");
        if (!channel || !ts || !name) return { ok: false, error: "invalid_arguments" };
        return { ok: true };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  #postMessage(params: SlackParams): SlackParams {
    const channel = stringParam(params, "channel");
    const text = stringParam(params, "text");
    if (!channel) return { ok: false, error: "channel_not_found" };
    const invalid = invalidJsonFields(params);
    if (invalid) return { ok: false, error: invalid };
    if (!text && params.blocks === undefined && params.attachments === undefined)
      return { ok: false, error: "no_text" };
    if (text && text.length > SLACK_MAX_TEXT) return { ok: false, error: "msg_too_long" };
    const threadTs = stringParam(params, "thread_ts");
    const ts = this.#nextTs();
    const message: PostedMessage = {
      channel,
      ts,
      text: text ?? "",
      edits: [],
      ...(threadTs ? { threadTs } : {}),
      ...(params.blocks !== undefined ? { blocks: params.blocks } : {}),
      ...(params.mrkdwn !== undefined
        ? { mrkdwn: params.mrkdwn !== false && params.mrkdwn !== "false" }
        : {}),
    };
    this.messages.push(message);
    return {
      ok: true,
      channel,
      ts,
      message: {
        type: "message",
        text: message.text,
        user: this.#identity.botUserId,
        bot_id: this.#identity.botId,
        ts,
        ...(threadTs ? { thread_ts: threadTs } : {}),
        ...(params.blocks !== undefined ? { blocks: params.blocks } : {}),
      },
    };
  }

  #update(params: SlackParams): SlackParams {
    const channel = stringParam(params, "channel");
    const ts = stringParam(params, "ts");
    const text = stringParam(params, "text") ?? "";
    const message = this.messages.find((m) => m.channel === channel && m.ts === ts);
    if (!message) return { ok: false, error: "message_not_found" };
    const invalid = invalidJsonFields(params);
    if (invalid) return { ok: false, error: invalid };
    if (text.length > SLACK_MAX_TEXT) return { ok: false, error: "msg_too_long" };
    message.edits.push(text);
    message.text = text;
    return { ok: true, channel, ts, text };
  }

  /** Message timestamps as Slack writes them (`seconds.micro`), unique and increasing. */
  #nextTs(): string {
    this.#tsCounter++;
    return `${1_700_000_000 + this.#tsCounter}.${String(this.#tsCounter).padStart(6, "0")}`;
  }
}
