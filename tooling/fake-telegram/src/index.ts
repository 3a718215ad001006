// @agent-kernel/fake-telegram: a local fake of the Telegram Bot API (the same HTTP wire format on 127.0.0.1)
// for adapter tests: long polling, sending with strict MarkdownV2/HTML parsing, media uploads, fault injection.
export { parseTelegramHtml } from "./html.ts";
export { checkLink, linkUserId } from "./links.ts";
export { EntityParseError, type ParsedText, parseMarkdownV2 } from "./markdown-v2.ts";
export type { UploadedFile } from "./request-body.ts";
export {
  CAPTION_LIMIT,
  type FakeTelegram,
  type FakeTelegramOptions,
  type Fault,
  type FaultKind,
  type InboundSpec,
  type RecordedCall,
  startFakeTelegram,
  TEXT_LIMIT,
} from "./server.ts";
export type {
  TgChat,
  TgChatType,
  TgEntityType,
  TgFile,
  TgMessage,
  TgMessageEntity,
  TgPhotoSize,
  TgResponse,
  TgUpdate,
  TgUpdateKind,
  TgUser,
} from "./types.ts";
export { channelChat, detectEntities, groupChat, privateChat, supergroupChat, user } from "./updates.ts";
