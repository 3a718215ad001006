// The Telegram Bot API objects the fake speaks (https://core.telegram.org/bots/api), reduced to the fields an
// adapter reads or writes. Owns only shapes; parsing lives in markdown-v2.ts / html.ts / request-body.ts,
// serving in server.ts and its parts, update builders in updates.ts.

export interface TgUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
  language_code?: string;
}

export type TgChatType = "private" | "group" | "supergroup" | "channel";

export interface TgChat {
  id: number;
  type: TgChatType;
  title?: string;
  username?: string;
  first_name?: string;
  last_name?: string;
  is_forum?: true;
}

export type TgEntityType =
  | "mention"
  | "hashtag"
  | "cashtag"
  | "bot_command"
  | "url"
  | "email"
  | "phone_number"
  | "bold"
  | "italic"
  | "underline"
  | "strikethrough"
  | "spoiler"
  | "blockquote"
  | "expandable_blockquote"
  | "code"
  | "pre"
  | "text_link"
  | "text_mention"
  | "custom_emoji";

export interface TgMessageEntity {
  type: TgEntityType;
  /** UTF-16 code units, like every Telegram offset. */
  offset: number;
  length: number;
  url?: string;
  user?: TgUser;
  language?: string;
}

export interface TgPhotoSize {
  file_id: string;
  file_unique_id: string;
  width: number;
  height: number;
  file_size?: number;
}

export interface TgFile {
  file_id: string;
  file_unique_id: string;
  file_name?: string;
  mime_type?: string;
  file_size?: number;
  duration?: number;
  width?: number;
  height?: number;
  emoji?: string;
}

export interface TgMessage {
  message_id: number;
  message_thread_id?: number;
  from?: TgUser;
  sender_chat?: TgChat;
  date: number;
  chat: TgChat;
  is_topic_message?: true;
  reply_to_message?: TgMessage;
  edit_date?: number;
  text?: string;
  entities?: TgMessageEntity[];
  caption?: string;
  caption_entities?: TgMessageEntity[];
  photo?: TgPhotoSize[];
  document?: TgFile;
  audio?: TgFile;
  voice?: TgFile;
  video?: TgFile;
  video_note?: TgFile;
  animation?: TgFile;
  sticker?: TgFile;
  forum_topic_created?: { name: string; icon_color: number };
}

export interface TgUpdate {
  update_id: number;
  message?: TgMessage;
  edited_message?: TgMessage;
  channel_post?: TgMessage;
  edited_channel_post?: TgMessage;
  callback_query?: { id: string; from: TgUser; data?: string; message?: TgMessage };
}

/** The update kinds a `getUpdates` `allowed_updates` list can name (the keys of `TgUpdate` besides the id). */
export type TgUpdateKind = Exclude<keyof TgUpdate, "update_id">;

/** `{ok:true,result}` or `{ok:false,error_code,description,parameters?}`: every Bot API answer. */
export type TgResponse<T = unknown> =
  | { ok: true; result: T; description?: string }
  | {
      ok: false;
      error_code: number;
      description: string;
      parameters?: { retry_after?: number; migrate_to_chat_id?: number };
    };
