// The methods that send or describe files: sendPhoto/Document/Audio/Voice/Video/Sticker (the file by http(s)
// URL, by a known `file_id`, or uploaded — the field itself or `attach://name` — with a caption parsed like
// text) and getFile. Owns how a media method finds its file and what lands in the message; does not own the
// file ids (file-store.ts), the thread/reply rules (message-methods.ts) or multipart decoding.
import { ApiError, badRequest } from "./api-error.ts";
import type { FileStore } from "./file-store.ts";
import { parseFormatted } from "./formatted-text.ts";
import { type BotContext, CAPTION_LIMIT, storeBotMessage, threadAndReply } from "./message-methods.ts";
import { type CallParams, optionalString, type UploadedFile } from "./request-body.ts";
import type { TgFile, TgMessage } from "./types.ts";

/** What each media method calls its file field, and the message field the file lands in. */
const MEDIA_METHODS: Record<
  string,
  { field: "photo" | "document" | "audio" | "voice" | "video" | "sticker" }
> = {
  sendPhoto: { field: "photo" },
  sendDocument: { field: "document" },
  sendAudio: { field: "audio" },
  sendVoice: { field: "voice" },
  sendVideo: { field: "video" },
  sendSticker: { field: "sticker" },
};

export interface FileContext extends BotContext {
  readonly files: FileStore;
}

export function sendMedia(method: string, params: CallParams, { bot, chats, files }: FileContext): TgMessage {
  const { values } = params;
  const state = chats.require(values);
  const field = MEDIA_METHODS[method]?.field;
  if (field === undefined) throw new ApiError(404, "Not Found");
  const extra = threadAndReply(state, values);
  const reference = values[field];
  let upload: UploadedFile | undefined;
  let existing: TgFile | undefined;
  let url: string | undefined;
  if (reference === undefined) {
    upload = params.files.find((file) => file.field === field);
    if (upload === undefined) throw badRequest(`there is no ${field} in the request`);
  } else if (typeof reference === "string" && reference.startsWith("attach://")) {
    const name = reference.slice("attach://".length);
    upload = params.files.find((file) => file.field === name);
    if (upload === undefined) throw badRequest(`file "${name}" to attach not found`);
  } else if (typeof reference === "string" && /^https?:\/\/\S+$/i.test(reference)) {
    url = reference;
  } else if (typeof reference === "string" && files.has(reference)) {
    existing = files.get(reference);
  } else {
    throw badRequest("wrong file identifier/HTTP URL specified");
  }
  if (upload !== undefined && upload.bytes.length === 0) throw badRequest(`file must be non-empty`);
  const caption = optionalString(values, "caption");
  const fields: Partial<TgMessage> = { ...extra };
  if (caption !== undefined && caption !== "") {
    const parsed = parseFormatted(caption, optionalString(values, "parse_mode"), chats);
    if (parsed.text.length > CAPTION_LIMIT) throw badRequest("message caption is too long");
    fields.caption = parsed.text;
    if (parsed.entities.length > 0) fields.caption_entities = parsed.entities;
  }
  const described: Partial<TgFile> =
    upload !== undefined
      ? { file_name: upload.fileName, mime_type: upload.mimeType }
      : url !== undefined
        ? { file_name: new URL(url).pathname.split("/").pop() ?? "" }
        : {};
  if (field === "photo") {
    fields.photo =
      existing === undefined ? files.photoSizes(upload?.bytes) : [{ ...existing, width: 1280, height: 960 }];
  } else {
    fields[field] = existing ?? files.newFile(field, described, upload?.bytes);
  }
  return storeBotMessage(bot, state, fields);
}

export function getFile(values: Record<string, unknown>, files: FileStore): TgFile & { file_path: string } {
  const id = optionalString(values, "file_id");
  const file = id === undefined ? undefined : files.get(id);
  if (file === undefined) throw badRequest("invalid file_id");
  return { ...file, file_path: `files/${file.file_id}` };
}
