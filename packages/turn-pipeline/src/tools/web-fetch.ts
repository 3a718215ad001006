// The `web_fetch` tool: an HTTP(S) GET of a model-chosen URL, answered as readable text. Owns: the request
// (Node's HTTP client resolving through the SSRF guard, so it connects only to checked addresses), following
// redirects by hand (each hop checked like the first, at most `maxRedirects`), the limits (wall time, bytes
// read — counted after decompression —, characters returned), what each content type becomes (HTML through
// html-to-text, other text as it is, anything else refused by name) and the errors the model reads. Does not
// own: which addresses are internal (ssrf-guard.ts), the policy deciding whether the tool is offered
// (tool-policy), or its config's defaults (@agent-kernel/config).
import type { IncomingMessage } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { createRequire } from "node:module";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { TOOLS_DEFAULTS, type WebFetchConfig } from "@agent-kernel/config";
import { Type } from "@earendil-works/pi-ai";
import { defineTool, type ToolDefinition } from "@earendil-works/pi-coding-agent";
import { type HostResolver, SsrfBlockedError, SsrfGuard } from "./ssrf-guard.ts";

// html-to-text (and its parser) is loaded on the first page converted, not when the tools are built: every
// `agent -m` imports this module, few turns fetch a page, and the library's ~30 modules cost ≈ 25 ms of start-up.
const requireLazily = createRequire(import.meta.url);
let htmlToTextConvert: typeof import("html-to-text").convert | undefined;
function htmlToText(...args: Parameters<typeof import("html-to-text").convert>): string {
  htmlToTextConvert ??= (requireLazily("html-to-text") as typeof import("html-to-text")).convert;
  return htmlToTextConvert(...args);
}

/** The settings of `web_fetch`: `tools.web.fetch` as parsed, every key optional (defaults: OpenClaw's). */
export type WebFetchSettings = Partial<WebFetchConfig>;

const DEFAULT_USER_AGENT = "Mozilla/5.0 (compatible; agent-kernel-web-fetch/1.0)";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** How much of an error page the model is shown. */
const ERROR_BODY_CHARS = 500;

/** What one fetch produced, before it is cut to the characters asked for. */
export interface WebFetchResult {
  readonly url: string;
  readonly finalUrl: string;
  readonly status: number;
  readonly contentType: string;
  readonly title?: string | undefined;
  readonly text: string;
  /** The response had more bytes than `maxResponseBytes`; the rest was not read. */
  readonly bytesTruncated: boolean;
}

interface RawResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
  readonly bytesTruncated: boolean;
}

function decompressed(response: IncomingMessage): Readable {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  if (encoding === "gzip" || encoding === "x-gzip") return response.pipe(createGunzip());
  if (encoding === "deflate") return response.pipe(createInflate());
  if (encoding === "br") return response.pipe(createBrotliDecompress());
  return response;
}

/** One GET through the guard's lookup, its body read up to `maxBytes` (decompressed) unless it redirects. */
function getOnce(
  url: URL,
  guard: SsrfGuard,
  headers: Record<string, string>,
  maxBytes: number,
  signal: AbortSignal,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(url, {
      method: "GET",
      headers,
      lookup: guard.lookup as never,
      agent: false,
      signal,
    });
    request.on("error", reject);
    request.on("response", (response) => {
      const status = response.statusCode ?? 0;
      const base = { status, statusText: response.statusMessage ?? "", headers: response.headers };
      // A redirect's body is never read: only its Location matters.
      if (REDIRECT_STATUSES.has(status) && typeof response.headers.location === "string") {
        response.destroy();
        resolve({ ...base, body: Buffer.alloc(0), bytesTruncated: false });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (bytesTruncated: boolean) => {
        if (settled) return;
        settled = true;
        resolve({ ...base, body: Buffer.concat(chunks), bytesTruncated });
      };
      const body = decompressed(response);
      body.on("data", (chunk: Buffer) => {
        if (settled) return;
        const room = maxBytes - size;
        if (chunk.length >= room) {
          if (room > 0) chunks.push(chunk.subarray(0, room));
          size = maxBytes;
          // The rest is never read: whatever the server still sends is dropped with the connection.
          finish(chunk.length > room || !response.complete);
          response.destroy();
          if (body !== response) body.destroy();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      body.on("end", () => finish(false));
      body.on("error", (error) => {
        if (!settled) {
          settled = true;
          reject(error);
        }
      });
      response.on("aborted", () => {
        if (!settled) {
          settled = true;
          reject(new Error("the connection closed before the response was complete"));
        }
      });
    });
    request.end();
  });
}

function mimeType(contentType: string): string {
  return (contentType.split(";")[0] ?? "").trim().toLowerCase();
}

function decodeBody(body: Buffer, contentType: string): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

const isHtml = (mime: string): boolean => mime === "text/html" || mime === "application/xhtml+xml";

function isText(mime: string): boolean {
  return (
    mime.startsWith("text/") ||
    mime === "application/json" ||
    mime === "application/xml" ||
    mime === "application/javascript" ||
    mime === "application/x-ndjson" ||
    mime.endsWith("+json") ||
    mime.endsWith("+xml")
  );
}

const SKIPPED = ["img", "nav", "script", "style", "noscript", "header", "footer", "aside", "form", "svg"];
const HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"];
const TEXT_OPTIONS = {
  wordwrap: false as const,
  selectors: [
    { selector: "a", options: { ignoreHref: true } },
    ...SKIPPED.map((selector) => ({ selector, format: "skip" })),
    ...HEADINGS.map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: "table", options: { uppercaseHeaderCells: false } },
  ],
};

/**
 * HTML as readable text: the page's main content (its `article`, else its `main`, else the whole body),
 * without scripts, styles, navigation, headers, footers, asides, forms or images.
 */
export function htmlToReadableText(html: string): { title?: string; text: string } {
  const titleHtml = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const title = titleHtml === undefined ? undefined : htmlToText(titleHtml, { wordwrap: false }).trim();
  let text = "";
  for (const base of ["article", "main"]) {
    text = htmlToText(html, {
      ...TEXT_OPTIONS,
      baseElements: { selectors: [base], returnDomByDefault: false },
    }).trim();
    if (text !== "") break;
  }
  if (text === "") text = htmlToText(html, TEXT_OPTIONS).trim();
  return title ? { title, text } : { text };
}

/** Everything `fetchReadable` needs besides the URL. */
export interface FetchReadableOptions {
  readonly settings?: WebFetchSettings | undefined;
  readonly signal?: AbortSignal | undefined;
  /** The resolver the guard checks (default: the system's, as `dns.lookup`). */
  readonly resolve?: HostResolver | undefined;
}

function parseTarget(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = base ? new URL(raw, base) : new URL(raw);
  } catch {
    throw new Error(`"${raw}" is not a valid absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, "")}:`);
  }
  return url;
}

/**
 * Fetches `rawUrl` under the settings' SSRF policy and limits and returns its readable text. Throws a clear
 * error for a refused target (`SsrfBlockedError`), too many redirects, a timeout, an HTTP error status (with
 * the start of the page) or a content type that is not text.
 */
export async function fetchReadable(
  rawUrl: string,
  options: FetchReadableOptions = {},
): Promise<WebFetchResult> {
  const defaults = TOOLS_DEFAULTS.webFetch;
  const settings = options.settings ?? {};
  const guard = new SsrfGuard(
    {
      allowPrivateNetwork: settings.ssrfPolicy?.dangerouslyAllowPrivateNetwork,
      allowedHostnames: settings.ssrfPolicy?.allowedHostnames,
      blockedHostnames: settings.ssrfPolicy?.blockedHostnames,
    },
    options.resolve,
  );
  const timeoutSeconds = settings.timeoutSeconds ?? defaults.timeoutSeconds;
  const maxRedirects = settings.maxRedirects ?? defaults.maxRedirects;
  const maxBytes = settings.maxResponseBytes ?? defaults.maxResponseBytes;
  const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const headers = {
    "User-Agent": settings.userAgent ?? DEFAULT_USER_AGENT,
    Accept: "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5",
    "Accept-Language": "en-US,en;q=0.9",
    "Accept-Encoding": "gzip, deflate, br",
  };

  const first = parseTarget(rawUrl);
  let url = first;
  try {
    for (let hop = 0; ; hop++) {
      guard.checkHost(url.hostname);
      const head = await getOnce(url, guard, headers, maxBytes, signal);
      const location = head.headers.location;
      if (REDIRECT_STATUSES.has(head.status) && typeof location === "string" && location !== "") {
        if (hop >= maxRedirects) {
          throw new Error(
            `stopped after ${maxRedirects} redirects (tools.web.fetch.maxRedirects); last: ${url.href}`,
          );
        }
        url = parseTarget(location, url);
        continue;
      }
      const contentType = String(head.headers["content-type"] ?? "");
      const mime = mimeType(contentType);
      const decoded = decodeBody(head.body, contentType);
      const sniffedHtml = mime === "" && /^\s*<(!doctype html|html|head|body)\b/i.test(decoded);
      if (head.status >= 400) {
        const page = isHtml(mime) || sniffedHtml ? htmlToReadableText(decoded).text : decoded;
        const start = page.slice(0, ERROR_BODY_CHARS).trim();
        throw new Error(
          `${url.href} answered HTTP ${head.status}${head.statusText ? ` ${head.statusText}` : ""}${start ? `:\n${start}` : ""}`,
        );
      }
      let title: string | undefined;
      let text: string;
      if (isHtml(mime) || sniffedHtml) {
        ({ title, text } = htmlToReadableText(decoded));
      } else if (isText(mime) || (mime === "" && !decoded.includes("\u0000"))) {
        text = decoded;
      } else {
        throw new Error(
          `${url.href} is ${mime || "binary data"}, not text or HTML; web_fetch returns only readable text`,
        );
      }
      return {
        url: first.href,
        finalUrl: url.href,
        status: head.status,
        contentType: mime || "unknown",
        title,
        text,
        bytesTruncated: head.bytesTruncated,
      };
    }
  } catch (error) {
    if (timeout.aborted && !options.signal?.aborted) {
      throw new Error(
        `fetching ${url.href} timed out after ${timeoutSeconds} s (tools.web.fetch.timeoutSeconds)`,
      );
    }
    if (options.signal?.aborted) throw new Error("aborted");
    if (error instanceof SsrfBlockedError) {
      throw new SsrfBlockedError(
        `refused to fetch ${url.href}: ${error.message}. Internal network targets are blocked unless tools.web.fetch.ssrfPolicy allows them.`,
      );
    }
    if (error instanceof Error && "code" in error && typeof error.code === "string") {
      throw new Error(
        `fetching ${url.href} failed: ${error.code}${error.message ? ` (${error.message})` : ""}`,
      );
    }
    throw error;
  }
}

const WEB_FETCH_PARAMETERS = Type.Object({
  url: Type.String({ description: "The http(s) URL to fetch" }),
  maxChars: Type.Optional(
    Type.Integer({ minimum: 100, description: "Return at most this many characters of text" }),
  ),
});

/** The `web_fetch` tool over `tools.web.fetch` (absent keys: OpenClaw's defaults). */
export function webFetchTool(settings: WebFetchSettings = {}, resolve?: HostResolver): ToolDefinition {
  const defaults = TOOLS_DEFAULTS.webFetch;
  const cap = settings.maxCharsCap ?? defaults.maxCharsCap;
  const standard = Math.min(settings.maxChars ?? defaults.maxChars, cap);
  return defineTool({
    name: "web_fetch",
    label: "web_fetch",
    description: `Fetch an http(s) URL with a plain GET (no JavaScript) and return its readable text: HTML is reduced to the page's main text, other text is returned as it is; binary content is refused. Returns at most ${standard} characters unless maxChars asks for more (up to ${cap}). Internal and private network addresses are refused.`,
    parameters: WEB_FETCH_PARAMETERS,
    execute: async (_toolCallId, params, signal) => {
      const result = await fetchReadable(params.url, { settings, signal, resolve });
      const limit = Math.min(params.maxChars ?? standard, cap);
      const cut = result.text.length > limit;
      const text = cut ? result.text.slice(0, limit) : result.text;
      const lines = [
        `URL: ${result.url}`,
        ...(result.finalUrl === result.url ? [] : [`Final URL: ${result.finalUrl}`]),
        `Status: ${result.status}`,
        `Content-Type: ${result.contentType}`,
        ...(result.title ? [`Title: ${result.title.slice(0, 256)}`] : []),
        ...(result.bytesTruncated
          ? [`[response cut at ${settings.maxResponseBytes ?? defaults.maxResponseBytes} bytes]`]
          : []),
        ...(cut ? [`[text cut: showing ${limit} of ${result.text.length} characters]`] : []),
        "",
        text,
      ];
      return {
        content: [{ type: "text", text: lines.join("\n") }],
        details: {
          url: result.url,
          finalUrl: result.finalUrl,
          status: result.status,
          contentType: result.contentType,
          title: result.title ?? null,
          truncated: cut || result.bytesTruncated,
          length: text.length,
          rawLength: result.text.length,
        },
      };
    },
  }) as unknown as ToolDefinition;
}
