// File uploads as Slack takes them: the files.uploadV2 flow (files.getUploadURLExternal hands out an upload URL,
// the client POSTs the file there — raw, or as the file part of a multipart form — and
// files.completeUploadExternal checks the stored length and shares it), and the legacy files.upload. Owns the
// uploaded files and the upload URL endpoint; does not own routing, auth or faults (http-front.ts,
// web-api-methods.ts).
import type { ServerResponse } from "node:http";
import { parseJsonParam, type SlackParams, stringParam } from "./request-params.ts";

export interface UploadedFile {
  readonly id: string;
  readonly filename: string;
  readonly length: number;
  bytes?: Uint8Array;
  title?: string;
  channel?: string;
  threadTs?: string;
  initialComment?: string;
  completed: boolean;
}

/** Where upload URLs point: the path under the fake's origin. */
export const UPLOAD_PATH = "/upload/";

export class FileUploads {
  /** Every file, in the order its upload began; a live array. */
  readonly files: UploadedFile[] = [];
  readonly #origin: () => string;
  #counter = 0;

  /** `origin` is read per call: the server knows its port only once it listens. */
  constructor(origin: () => string) {
    this.#origin = origin;
  }

  getUploadURLExternal(params: SlackParams): SlackParams {
    const filename = stringParam(params, "filename");
    const length = Number(params.length);
    if (!filename) return { ok: false, error: "invalid_arguments" };
    if (!Number.isInteger(length) || length <= 0) return { ok: false, error: "invalid_arguments" };
    const id = this.#nextId();
    this.files.push({ id, filename, length, completed: false });
    return { ok: true, upload_url: `${this.#origin()}${UPLOAD_PATH}${id}`, file_id: id };
  }

  completeUploadExternal(params: SlackParams): SlackParams {
    const list = parseJsonParam(params.files);
    if (!Array.isArray(list) || list.length === 0) return { ok: false, error: "invalid_arguments" };
    const completed: SlackParams[] = [];
    for (const item of list) {
      const id = typeof item === "object" && item !== null ? (item as SlackParams).id : undefined;
      const file = this.files.find((f) => f.id === id);
      if (!file?.bytes) return { ok: false, error: "file_not_found" };
      if (file.bytes.length !== file.length) return { ok: false, error: "file_upload_size_mismatch" };
      const title = (item as SlackParams).title;
      if (typeof title === "string") file.title = title;
      const channel = stringParam(params, "channel_id");
      if (channel) file.channel = channel;
      const threadTs = stringParam(params, "thread_ts");
      if (threadTs) file.threadTs = threadTs;
      const comment = stringParam(params, "initial_comment");
      if (comment) file.initialComment = comment;
      file.completed = true;
      completed.push({ id: file.id, title: file.title ?? file.filename });
    }
    return { ok: true, files: completed };
  }

  /** The legacy files.upload: the file's text `content` in one call. */
  filesUpload(params: SlackParams): SlackParams {
    const filename = stringParam(params, "filename") ?? "file";
    const content = stringParam(params, "content") ?? "";
    const id = this.#nextId();
    const bytes = new TextEncoder().encode(content);
    const channel = stringParam(params, "channels");
    const threadTs = stringParam(params, "thread_ts");
    this.files.push({
      id,
      filename,
      length: bytes.length,
      bytes,
      completed: true,
      ...(channel ? { channel } : {}),
      ...(threadTs ? { threadTs } : {}),
    });
    return { ok: true, file: { id, name: filename } };
  }

  /** A POST to an upload URL: stores the file's bytes (404 for an unknown file id). */
  async receiveUpload(fileId: string, contentType: string, body: Buffer, res: ServerResponse): Promise<void> {
    const file = this.files.find((f) => f.id === fileId);
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    // Slack's upload URL takes the file as the raw body or as a multipart form (what @slack/web-api's
    // filesUploadV2 sends): the stored bytes are the file's, never the multipart envelope around them
    const bytes = await uploadedBytes(contentType, body);
    if (bytes === undefined) {
      res.writeHead(400, { "content-type": "text/plain" }).end("no file in the multipart body");
      return;
    }
    file.bytes = bytes;
    res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${bytes.length}`);
  }

  #nextId(): string {
    this.#counter++;
    return `F${String(this.#counter).padStart(8, "0")}`;
  }
}

/** The file bytes of an upload-URL POST: the one file part of a multipart body, else the raw body. */
async function uploadedBytes(contentType: string, body: Buffer): Promise<Uint8Array | undefined> {
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) return new Uint8Array(body);
  let form: FormData;
  try {
    form = await new Request("http://fake.invalid/", {
      method: "POST",
      headers: { "content-type": contentType },
      body,
    }).formData();
  } catch {
    return undefined;
  }
  for (const [, value] of form) {
    if (typeof value !== "string") return new Uint8Array(await value.arrayBuffer());
  }
  return undefined;
}
