// Files people shared in Slack, as the bot downloads them: each hosted file has Slack's file object
// (`url_private`, `url_private_download`, `mimetype`, `size`) for an event's `files`, and its bytes are served at
// `GET /files-pri/<team>-<id>/<name>` only to a request bearing the bot token — without it Slack answers 200
// with its HTML sign-in page (not an error status), which is what the fake does too. Owns the hosted files and
// their downloads; does not own routing (http-front.ts) or uploads by the bot (file-uploads.ts).
import type { ServerResponse } from "node:http";
import type { SlackParams } from "./request-params.ts";

/** The path prefix of hosted files' private URLs. */
export const HOSTED_FILES_PATH = "/files-pri/";

/** A file to host: its name, the type Slack reports and its bytes. */
export interface HostedFileInput {
  readonly name: string;
  readonly mimetype: string;
  readonly bytes: Uint8Array;
}

/** One download of a hosted file: the token it bore and what was answered. */
export interface FileDownload {
  readonly path: string;
  readonly token: string | undefined;
  readonly status: number;
}

const SIGN_IN_PAGE =
  "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>";

export class HostedFiles {
  readonly downloads: FileDownload[] = [];
  readonly #files = new Map<string, HostedFileInput>();
  readonly #origin: () => string;
  readonly #teamId: string;
  readonly #botToken: string;
  #count = 0;

  constructor(origin: () => string, teamId: string, botToken: string) {
    this.#origin = origin;
    this.#teamId = teamId;
    this.#botToken = botToken;
  }

  /** Hosts a file; returns its Slack file object, for a `message` event's `files`. */
  host(file: HostedFileInput): SlackParams {
    const id = `F${String(++this.#count).padStart(8, "0")}`;
    const path = `${HOSTED_FILES_PATH}${this.#teamId}-${id}/${encodeURIComponent(file.name)}`;
    this.#files.set(path, file);
    const url = `${this.#origin()}${path}`;
    return {
      id,
      name: file.name,
      mimetype: file.mimetype,
      filetype: file.mimetype.split("/")[1] ?? "binary",
      size: file.bytes.length,
      url_private: url,
      url_private_download: `${url}?download=1`,
    };
  }

  /** A GET of a private URL: the bytes for the bot token, the sign-in page otherwise, 404 for no such file. */
  serve(path: string, authorization: string | undefined, res: ServerResponse): void {
    const token = authorization?.startsWith("Bearer ") ? authorization.slice("Bearer ".length) : undefined;
    const file = this.#files.get(path);
    if (file === undefined) {
      this.downloads.push({ path, token, status: 404 });
      res.writeHead(404, { "content-type": "text/plain" }).end("file_not_found");
      return;
    }
    this.downloads.push({ path, token, status: 200 });
    if (token !== this.#botToken) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(SIGN_IN_PAGE);
      return;
    }
    res
      .writeHead(200, { "content-type": file.mimetype, "content-length": String(file.bytes.length) })
      .end(Buffer.from(file.bytes));
  }
}
