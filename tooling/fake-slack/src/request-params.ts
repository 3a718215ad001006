// Reads the parameters of a Web API call as Slack does: a JSON object body or a form body whose `blocks`,
// `attachments`, `metadata` and `files` fields are decoded as JSON (clients such as @slack/web-api JSON-encode
// every object argument), plus the typed accessors and the invalid-format errors the methods share. Owns
// decoding only; what a method does with its parameters is web-api-methods.ts's and file-uploads.ts's.
import type { IncomingMessage } from "node:http";

export type SlackParams = Record<string, unknown>;

/** The form fields Slack decodes as JSON. */
const JSON_FORM_FIELDS = ["blocks", "attachments", "metadata", "files"] as const;

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** The call's parameters; throws on a JSON body that is not an object (the caller answers `invalid_json`). */
export function parseParams(contentType: string, body: string): SlackParams {
  if (body.length === 0) return {};
  if (contentType.includes("application/json")) {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("not an object");
    return parsed as SlackParams;
  }
  const params: SlackParams = Object.fromEntries(new URLSearchParams(body));
  // Slack reads these form fields as JSON (clients such as @slack/web-api JSON-encode every object argument);
  // a value that is not JSON stays a string and the method answers its invalid-format error
  for (const name of JSON_FORM_FIELDS) {
    const value = params[name];
    if (typeof value !== "string") continue;
    try {
      params[name] = JSON.parse(value);
    } catch {
      // left as the string: invalidJsonFields names the error
    }
  }
  return params;
}

/** Slack's error for a `blocks` / `attachments` that is not a JSON array (form-encoded or not), else undefined. */
export function invalidJsonFields(params: SlackParams): string | undefined {
  if (params.blocks !== undefined && !Array.isArray(parseJsonParam(params.blocks)))
    return "invalid_blocks_format";
  if (params.attachments !== undefined && !Array.isArray(parseJsonParam(params.attachments)))
    return "invalid_attachments";
  if (typeof params.blocks === "string") params.blocks = parseJsonParam(params.blocks);
  if (typeof params.attachments === "string") params.attachments = parseJsonParam(params.attachments);
  return undefined;
}

export function stringParam(params: SlackParams, name: string): string | undefined {
  const value = params[name];
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return undefined;
}

/** Form bodies carry arrays as JSON strings (Slack's convention for `files`, `blocks`). */
export function parseJsonParam(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
