// Session keys and agent ids, as OpenClaw 2026.9.6 spells them. Owns: agent-id
// normalisation, parsing, classifying and building `agent:<agentId>:<rest>`
// keys (main key, dmScope variants, identity links, threads, cron runs, hooks,
// subagents) and the case rules per channel. Does not own: which agent or key a
// run uses (session-identity.ts) or what is stored under a key (session-store).

export const DEFAULT_AGENT_ID = "main";
export const DEFAULT_MAIN_KEY = "main";
export const DEFAULT_ACCOUNT_ID = "default";

const VALID_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/i;
const INVALID_ID_CHARS = /[^a-z0-9_-]+/g;
const BLOCKED_OBJECT_KEYS = new Set(["__proto__", "prototype", "constructor"]);

/** Trimmed and lower-cased; "" for anything that is not a non-blank string. */
function lowerTrim(value: string | undefined | null): string {
  return typeof value === "string" ? value.trim().toLowerCase() : "";
}

function canonicalId(trimmed: string): string {
  const lowered = trimmed.toLowerCase();
  if (VALID_ID.test(trimmed)) return lowered;
  return lowered.replace(INVALID_ID_CHARS, "-").replace(/^-+/, "").replace(/-+$/, "").slice(0, 64);
}

/** True when the value already is a valid agent id (any case): 1-64 of `[a-z0-9_-]`, not starting with `_`/`-`. */
export function isValidAgentId(value: string | undefined | null): boolean {
  const trimmed = (value ?? "").trim();
  return trimmed !== "" && VALID_ID.test(trimmed);
}

/**
 * The filesystem-safe canonical agent id: lower-cased; runs of other characters
 * become `-`, leading/trailing `-` go, at most 64 characters; "main" when
 * nothing is left (`"My Agent!"` → `my-agent`, `"---"` → `main`).
 */
export function normalizeAgentId(value: string | undefined | null): string {
  return canonicalId((value ?? "").trim()) || DEFAULT_AGENT_ID;
}

/** The same rules for channel account ids; "default" when empty or unusable. */
export function normalizeAccountId(value: string | undefined | null): string {
  const trimmed = (value ?? "").trim();
  if (!trimmed) return DEFAULT_ACCOUNT_ID;
  const canonical = canonicalId(trimmed);
  return canonical && !BLOCKED_OBJECT_KEYS.has(canonical) ? canonical : DEFAULT_ACCOUNT_ID;
}

/** `main` unless a non-blank main key is configured; lower-cased. */
export function normalizeMainKey(value: string | undefined | null): string {
  return lowerTrim(value) || DEFAULT_MAIN_KEY;
}

// ---------------------------------------------------------------------------
// Case rules. Keys are lower-cased, except provider-opaque peer ids: a Signal
// group id (the segment after `signal:group:`) and a Matrix room (everything
// after `matrix:channel:`/`matrix:group:` up to a `:thread:` marker, and the
// thread id after it).

const SIGNAL_GROUP_ID = /(^|:)signal:group:([^:]+)/gi;
const MATRIX_ROOM_KEY = /^(?:(?:agent:[^:]*:)+:*)?matrix:(?:channel|group):/i;

interface PreservedSpan {
  readonly start: number;
  readonly end: number;
  readonly trim: boolean;
}

function casePreservedSpans(raw: string): PreservedSpan[] {
  const spans: PreservedSpan[] = [];
  for (const match of raw.matchAll(SIGNAL_GROUP_ID)) {
    const segment = match[2] ?? "";
    const start = match.index + match[0].length - segment.length;
    spans.push({ start, end: start + segment.length, trim: true });
  }
  const matrix = MATRIX_ROOM_KEY.exec(raw);
  if (!matrix || matrix[0].length >= raw.length) return spans;
  const tailStart = matrix[0].length;
  const marker = raw.slice(tailStart).toLowerCase().lastIndexOf(":thread:");
  if (marker === -1) {
    spans.push({ start: tailStart, end: raw.length, trim: false });
    return spans;
  }
  spans.push({ start: tailStart, end: tailStart + marker, trim: false });
  const threadStart = tailStart + marker + ":thread:".length;
  if (threadStart < raw.length) spans.push({ start: threadStart, end: raw.length, trim: false });
  return spans;
}

/** Trims and lower-cases a session key, keeping Signal group ids and Matrix rooms as they are. */
export function normalizeSessionKey(sessionKey: string | undefined | null): string {
  const raw = (sessionKey ?? "").trim();
  if (!raw) return "";
  const folded = raw.toLowerCase();
  if (!folded.includes("signal:") && !folded.includes("matrix:")) return folded;
  const spans = casePreservedSpans(raw)
    .filter((span) => span.end > span.start)
    .sort((a, b) => a.start - b.start);
  let normalized = "";
  let cursor = 0;
  for (const span of spans) {
    if (span.start < cursor) continue;
    normalized += lowerTrim(raw.slice(cursor, span.start));
    const kept = raw.slice(span.start, span.end);
    normalized += span.trim ? kept.trim() : kept;
    cursor = span.end;
  }
  return normalized + lowerTrim(raw.slice(cursor));
}

function peerIdCaseSpan(channel: string | undefined, peerKind: string | undefined): boolean {
  const c = lowerTrim(channel);
  const k = lowerTrim(peerKind);
  return (c === "signal" && k === "group") || (c === "matrix" && (k === "channel" || k === "group"));
}

/** A peer id as keys store it: trimmed, lower-cased unless the channel's peer ids are case-sensitive (Signal groups, Matrix rooms). */
export function normalizeSessionPeerId(params: {
  readonly channel?: string | undefined;
  readonly peerKind?: string | undefined;
  readonly peerId?: string | undefined | null;
}): string {
  const peerId = (params.peerId ?? "").trim();
  if (!peerId) return "";
  return peerIdCaseSpan(params.channel, params.peerKind) ? peerId : peerId.toLowerCase();
}

// ---------------------------------------------------------------------------
// Parsing and classification.

export interface ParsedAgentSessionKey {
  readonly agentId: string;
  /** Everything after `agent:<agentId>:`; opaque, colon-separated. */
  readonly rest: string;
}

function splitAgentKey(key: string): ParsedAgentSessionKey | null {
  if (key.slice(0, 6).toLowerCase() !== "agent:") return null;
  const agentIdEnd = key.indexOf(":", 6);
  if (agentIdEnd === -1) return null;
  const agentId = key.slice(6, agentIdEnd).trim();
  const rest = key.slice(agentIdEnd + 1);
  return agentId && rest && !rest.startsWith(":") ? { agentId, rest } : null;
}

/** `agent:<agentId>:<rest>` (any case) → its parts, canonicalised; null when it is not one. */
export function parseAgentSessionKey(sessionKey: string | undefined | null): ParsedAgentSessionKey | null {
  return splitAgentKey(normalizeSessionKey(sessionKey));
}

export type SessionKeyShape = "missing" | "agent" | "malformed_agent" | "legacy_or_alias";

/** missing (blank) | agent (parses) | malformed_agent (`agent:` that does not parse) | legacy_or_alias. */
export function classifySessionKeyShape(sessionKey: string | undefined | null): SessionKeyShape {
  const raw = (sessionKey ?? "").trim();
  if (!raw) return "missing";
  if (parseAgentSessionKey(raw)) return "agent";
  return raw.toLowerCase().startsWith("agent:") ? "malformed_agent" : "legacy_or_alias";
}

/** `global` and `unknown` are never agent-scoped. */
export function isUnscopedSessionKeySentinel(sessionKey: string | undefined | null): boolean {
  const lowered = lowerTrim(sessionKey);
  return lowered === "global" || lowered === "unknown";
}

/**
 * The agent a key belongs to; for a key that names none, the configured
 * default. Throws for a malformed `agent:` key and when there is no default.
 */
export function resolveAgentIdFromSessionKey(
  sessionKey: string | undefined | null,
  configuredDefaultAgentId?: string,
): string {
  const parsed = parseAgentSessionKey(sessionKey);
  if (parsed) return normalizeAgentId(parsed.agentId);
  if (classifySessionKeyShape(sessionKey) === "malformed_agent") {
    throw new Error("Malformed agent session key; refusing default-agent resolution.");
  }
  const fallback = configuredDefaultAgentId?.trim();
  if (fallback) return normalizeAgentId(fallback);
  throw new Error("Session key does not contain an agent id; resolve it with the configured default agent.");
}

export function isCronSessionKey(sessionKey: string | undefined | null): boolean {
  return parseAgentSessionKey(sessionKey)?.rest.startsWith("cron:") ?? false;
}

export function isCronRunSessionKey(sessionKey: string | undefined | null): boolean {
  const parsed = parseAgentSessionKey(sessionKey);
  return parsed ? /^cron:[^:]+:run:[^:]+(?::|$)/.test(parsed.rest) : false;
}

export function isHookSessionKey(sessionKey: string | undefined | null): boolean {
  return parseAgentSessionKey(sessionKey)?.rest.startsWith("hook:") ?? false;
}

export function isAcpSessionKey(sessionKey: string | undefined | null): boolean {
  const raw = (sessionKey ?? "").trim();
  if (!raw) return false;
  if (raw.toLowerCase().startsWith("acp:")) return true;
  return parseAgentSessionKey(raw)?.rest.startsWith("acp:") ?? false;
}

export function isSubagentSessionKey(sessionKey: string | undefined | null): boolean {
  const raw = (sessionKey ?? "").trim();
  if (!raw) return false;
  if (raw.toLowerCase().startsWith("subagent:")) return true;
  return parseAgentSessionKey(raw)?.rest.startsWith("subagent:") ?? false;
}

/** How many `subagent:` segments the key's rest holds (0 for a top-level session). */
export function getSubagentDepth(sessionKey: string | undefined | null): number {
  const raw = lowerTrim(sessionKey);
  if (!raw) return 0;
  return ((parseAgentSessionKey(raw)?.rest ?? raw).match(/(^|:)subagent:/g) ?? []).length;
}

/** Splits the exact shape `agent:<id>:cron:<job>:run:<runId>`; any other key comes back whole. */
export function parseCronRunScopeSuffix(sessionKey: string | undefined | null): {
  baseSessionKey: string | undefined;
  runId: string | undefined;
} {
  const raw = (sessionKey ?? "").trim();
  if (!raw) return { baseSessionKey: undefined, runId: undefined };
  const parsed = parseAgentSessionKey(raw);
  if (!parsed || !/^cron:[^:]+:run:[^:]+$/.test(parsed.rest))
    return { baseSessionKey: raw, runId: undefined };
  const marker = raw.toLowerCase().lastIndexOf(":run:");
  return { baseSessionKey: raw.slice(0, marker), runId: raw.slice(marker + 5) };
}

/** Splits at the last `:thread:` (any case); `:topic:` stays part of the peer id. */
export function parseThreadSessionSuffix(sessionKey: string | undefined | null): {
  baseSessionKey: string | undefined;
  threadId: string | undefined;
} {
  const raw = (sessionKey ?? "").trim();
  if (!raw) return { baseSessionKey: undefined, threadId: undefined };
  const marker = raw.toLowerCase().lastIndexOf(":thread:");
  const threadId = marker === -1 ? "" : raw.slice(marker + 8).trim();
  return {
    baseSessionKey: marker === -1 ? raw : raw.slice(0, marker),
    threadId: threadId || undefined,
  };
}

// ---------------------------------------------------------------------------
// Building keys.

/** `agent:<normalizedAgentId>:<mainKey or "main">`. */
export function buildAgentMainSessionKey(params: { agentId: string; mainKey?: string | undefined }): string {
  return `agent:${normalizeAgentId(params.agentId)}:${normalizeMainKey(params.mainKey)}`;
}

export type DmScope = "main" | "per-peer" | "per-channel-peer" | "per-account-channel-peer";
export type PeerKind = "direct" | "group" | "channel";
/** `session.identityLinks`: canonical name → peer ids (`"telegram:123"` or bare `"123"`). */
export type IdentityLinks = Readonly<Record<string, readonly string[]>>;

export interface PeerSessionKeyParams {
  readonly agentId: string;
  readonly mainKey?: string | undefined;
  readonly channel: string;
  readonly accountId?: string | undefined;
  readonly peerKind?: PeerKind | undefined;
  readonly peerId?: string | undefined;
  readonly dmScope?: DmScope | undefined;
  readonly groupScope?: "main" | "per-group" | undefined;
  readonly identityLinks?: IdentityLinks | undefined;
}

/** The canonical name a direct peer is linked to by `session.identityLinks`, if any. */
export function resolveLinkedDirectPeerId(params: {
  identityLinks: IdentityLinks | undefined;
  channel: string;
  peerId: string;
}): string | null {
  const { identityLinks } = params;
  const peerId = params.peerId.trim();
  if (!identityLinks || !peerId) return null;
  const candidates = new Set<string>([peerId.toLowerCase()]);
  const channel = lowerTrim(params.channel);
  if (channel) candidates.add(`${channel}:${peerId}`.toLowerCase());
  for (const [canonical, ids] of Object.entries(identityLinks)) {
    const name = canonical.trim();
    if (!name || !Array.isArray(ids)) continue;
    if (ids.some((id) => candidates.has(lowerTrim(id)))) return name;
  }
  return null;
}

/**
 * The session key of an inbound peer. Direct chats follow `dmScope` (default
 * `main`: every DM shares the main session); groups and channels get
 * `<channel>:<kind>:<peerId>` unless `groupScope` is `main`.
 */
export function buildAgentPeerSessionKey(params: PeerSessionKeyParams): string {
  const peerKind = params.peerKind ?? "direct";
  const agentId = normalizeAgentId(params.agentId);
  const main = () => buildAgentMainSessionKey({ agentId: params.agentId, mainKey: params.mainKey });
  if (peerKind === "direct") {
    const dmScope = params.dmScope ?? "main";
    let peerId = (params.peerId ?? "").trim();
    const linked =
      dmScope === "main"
        ? null
        : resolveLinkedDirectPeerId({ identityLinks: params.identityLinks, channel: params.channel, peerId });
    if (linked) peerId = linked;
    peerId = lowerTrim(peerId);
    if (!peerId || dmScope === "main") return main();
    const channel = lowerTrim(params.channel) || "unknown";
    if (dmScope === "per-account-channel-peer") {
      return `agent:${agentId}:${channel}:${normalizeAccountId(params.accountId)}:direct:${peerId}`;
    }
    if (dmScope === "per-channel-peer") return `agent:${agentId}:${channel}:direct:${peerId}`;
    if (dmScope === "per-peer") return `agent:${agentId}:direct:${peerId}`;
    return main();
  }
  if (params.groupScope === "main") return main();
  const channel = lowerTrim(params.channel) || "unknown";
  const rawPeer = (params.peerId ?? "").trim();
  const peerId = (peerIdCaseSpan(params.channel, peerKind) ? rawPeer : rawPeer.toLowerCase()) || "unknown";
  return `agent:${agentId}:${channel}:${peerKind}:${peerId}`;
}

/** Appends `:thread:<lower-cased id>` to a base key; a blank thread id leaves it alone. */
export function resolveThreadSessionKeys(params: {
  baseSessionKey: string;
  threadId?: string | undefined;
  parentSessionKey?: string | undefined;
  useSuffix?: boolean | undefined;
}): { sessionKey: string; parentSessionKey: string | undefined } {
  const threadId = (params.threadId ?? "").trim();
  if (!threadId) return { sessionKey: params.baseSessionKey, parentSessionKey: undefined };
  return {
    sessionKey:
      (params.useSuffix ?? true)
        ? `${params.baseSessionKey}:thread:${threadId.toLowerCase()}`
        : params.baseSessionKey,
    parentSessionKey: params.parentSessionKey,
  };
}

/**
 * A request key scoped to an agent: blank or `main` → the main key; an agent
 * key is re-emitted canonicalised; anything else becomes `agent:<id>:<key>`.
 */
export function toAgentStoreSessionKey(params: {
  agentId: string;
  requestKey?: string | undefined;
  mainKey?: string | undefined;
}): string {
  const raw = (params.requestKey ?? "").trim();
  const lowered = raw.toLowerCase();
  if (!raw || lowered === "main")
    return buildAgentMainSessionKey({ agentId: params.agentId, mainKey: params.mainKey });
  const parsed = parseAgentSessionKey(raw);
  if (parsed) return `agent:${parsed.agentId}:${parsed.rest}`;
  const normalized = normalizeSessionKey(raw);
  if (lowered.startsWith("agent:")) return normalized;
  return `agent:${normalizeAgentId(params.agentId)}:${normalized}`;
}

/** The reverse of toAgentStoreSessionKey: the rest of an agent key, or the raw key. */
export function toAgentRequestSessionKey(storeKey: string | undefined | null): string | undefined {
  const raw = (storeKey ?? "").trim();
  if (!raw) return undefined;
  return parseAgentSessionKey(raw)?.rest ?? raw;
}

/** `agent:<agentId>:cron:<jobId>`, and with a run id `...:run:<runId>` (an isolated cron run). */
export function buildCronSessionKey(params: {
  agentId: string;
  jobId: string;
  runId?: string | undefined;
}): string {
  const jobId = requireSegment("cron job id", params.jobId);
  const base = `agent:${normalizeAgentId(params.agentId)}:cron:${jobId}`;
  return params.runId === undefined ? base : `${base}:run:${requireSegment("cron run id", params.runId)}`;
}

/** `agent:<agentId>:hook:<hookId>` (a webhook or Gmail hook session). */
export function buildHookSessionKey(params: { agentId: string; hookId: string }): string {
  return `agent:${normalizeAgentId(params.agentId)}:hook:${requireSegment("hook id", params.hookId)}`;
}

/** `<parentKey>:subagent:<id>`; nesting repeats the suffix, so the depth is the segment count. */
export function buildSubagentSessionKey(params: { parentSessionKey: string; subagentId: string }): string {
  const parent = parseAgentSessionKey(params.parentSessionKey);
  if (!parent) {
    throw new Error(
      `subagent parent "${params.parentSessionKey}" is not an agent session key ("agent:<id>:<rest>")`,
    );
  }
  return `agent:${parent.agentId}:${parent.rest}:subagent:${requireSegment("subagent id", params.subagentId)}`;
}

function requireSegment(what: string, value: string): string {
  const segment = value.trim().toLowerCase();
  if (!segment || segment.includes(":")) {
    throw new Error(`invalid ${what} "${value}": expected a non-empty value without ":"`);
  }
  return segment;
}

/**
 * The key a group's unseen-message history is kept under:
 * `<channel>:<accountId>:<peerKind>:<peerId>` (channel lower-cased, "unknown"
 * when blank; account id normalised, "default" when blank; peer id as
 * normalizeSessionPeerId keeps it, "unknown" when blank). It carries no agent:
 * one group's history is shared by every agent that reads it.
 */
export function buildGroupHistoryKey(params: {
  readonly channel?: string | undefined;
  readonly accountId?: string | undefined | null;
  readonly peerKind: PeerKind;
  readonly peerId?: string | undefined | null;
}): string {
  const channel = lowerTrim(params.channel) || "unknown";
  const accountId = normalizeAccountId(params.accountId);
  const peerId =
    normalizeSessionPeerId({ channel, peerKind: params.peerKind, peerId: params.peerId }) || "unknown";
  return `${channel}:${accountId}:${params.peerKind}:${peerId}`;
}
