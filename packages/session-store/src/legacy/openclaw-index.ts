// Reading an OpenClaw `sessions.json` (one agent's session index: session key → entry with `sessionId`,
// `updatedAt`, `sessionFile` and metadata). Owns: validating each record, keeping the metadata fields the
// kernel owns (openclaw-behaviors §13, the `SessionMeta` shape) with their types checked, and saying what was
// left out and why. Pure: text in, records and notes out. Does not own: finding the transcript files or
// writing the store (import.ts).
import type { SessionMeta } from "../session-meta.ts";
import type { ImportNote } from "./report.ts";

export interface OpenClawSessionRecord {
  readonly sessionKey: string;
  readonly sessionId: string;
  /** Epoch milliseconds, when the index had a valid one. */
  readonly updatedAt: number | undefined;
  readonly meta: SessionMeta;
}

export type OpenClawIndexParse =
  | {
      readonly ok: true;
      readonly records: readonly OpenClawSessionRecord[];
      readonly skipped: readonly ImportNote[];
    }
  | { readonly ok: false; readonly reason: string };

type FieldKind = "string" | "number" | "boolean" | "object" | "string[]" | "any";

/** Every `SessionMeta` field with its JSON type; `satisfies` keeps this list in step with the type. */
const META_FIELDS = {
  sessionFile: "string",
  sessionStartedAt: "number",
  lastInteractionAt: "number",
  lastActivityAt: "number",
  label: "string",
  chatType: "string",
  channel: "string",
  origin: "object",
  spawnedBy: "string",
  parentSessionKey: "string",
  spawnDepth: "number",
  subagentRole: "string",
  subagentControlScope: "string",
  inheritedToolAllow: "string[]",
  inheritedToolDeny: "string[]",
  forkedFromParent: "boolean",
  systemSent: "boolean",
  abortedLastRun: "boolean",
  abortCutoffMessageSid: "string",
  abortCutoffTimestamp: "number",
  thinkingLevel: "string",
  verboseLevel: "string",
  reasoningLevel: "string",
  elevatedLevel: "string",
  traceLevel: "string",
  fastMode: "boolean",
  responseUsage: "string",
  sendPolicy: "string",
  groupActivation: "string",
  providerOverride: "string",
  modelOverride: "string",
  modelOverrideSource: "string",
  modelOverrideFallbackOriginProvider: "string",
  modelOverrideFallbackOriginModel: "string",
  liveModelSwitchPending: "boolean",
  agentRuntimeOverride: "string",
  agentHarnessId: "string",
  authProfileOverride: "string",
  authProfileOverrideSource: "string",
  authProfileOverrideCompactionCount: "number",
  queueMode: "string",
  queueDebounceMs: "number",
  queueCap: "number",
  queueDrop: "string",
  inputTokens: "number",
  outputTokens: "number",
  totalTokens: "number",
  totalTokensFresh: "boolean",
  cacheRead: "number",
  cacheWrite: "number",
  estimatedCostUsd: "number",
  modelProvider: "string",
  model: "string",
  contextTokens: "number",
  compactionCount: "number",
  memoryFlushAt: "number",
  memoryFlushCompactionCount: "number",
  fallbackNoticeSelectedModel: "string",
  fallbackNoticeActiveModel: "string",
  fallbackNoticeReason: "string",
  skillsSnapshot: "any",
  cliSessionIds: "object",
  cliSessionBindings: "object",
  deliveryContext: "object",
  lastChannel: "string",
  lastTo: "string",
} as const satisfies Record<keyof SessionMeta, FieldKind>;

/** Enumerated values of a few fields; anything else is left out with a note. */
const ENUM_FIELDS: Readonly<Partial<Record<keyof SessionMeta, readonly string[]>>> = {
  modelOverrideSource: ["user", "auto", "default"],
  authProfileOverrideSource: ["user", "auto"],
};

/** Index fields that are not metadata: identity, or read separately. */
const STRUCTURAL_FIELDS = new Set(["sessionId", "updatedAt"]);

/** Parses one `sessions.json`. A record that cannot be used is skipped with a note; the others still import. */
export function parseOpenClawSessionIndex(text: string, file: string): OpenClawIndexParse {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      reason: `malformed JSON (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  if (!isRecord(document))
    return { ok: false, reason: "expected a JSON object of session key → session entry" };
  const records: OpenClawSessionRecord[] = [];
  const skipped: ImportNote[] = [];
  const notOwned = new Map<string, number>();
  for (const [sessionKey, value] of Object.entries(document)) {
    if (sessionKey.trim() === "") {
      skipped.push({ file, reason: "a record with an empty session key" });
      continue;
    }
    if (!isRecord(value)) {
      skipped.push({ file, reason: `session ${JSON.stringify(sessionKey)}: the entry is not an object` });
      continue;
    }
    if (typeof value.sessionId !== "string" || value.sessionId.trim() === "") {
      skipped.push({ file, reason: `session ${JSON.stringify(sessionKey)}: no sessionId` });
      continue;
    }
    const meta: Record<string, unknown> = {};
    for (const [field, fieldValue] of Object.entries(value)) {
      if (STRUCTURAL_FIELDS.has(field)) continue;
      if (!Object.hasOwn(META_FIELDS, field)) {
        notOwned.set(field, (notOwned.get(field) ?? 0) + 1);
        continue;
      }
      if (fieldValue === null || fieldValue === undefined) continue;
      const kind = META_FIELDS[field as keyof SessionMeta];
      const allowed = ENUM_FIELDS[field as keyof SessionMeta];
      if (!hasKind(fieldValue, kind) || (allowed && !allowed.includes(fieldValue as string))) {
        skipped.push({
          file,
          reason: `session ${JSON.stringify(sessionKey)}: field ${field} left out, expected ${allowed ? allowed.join(" | ") : kind}, found ${JSON.stringify(fieldValue)}`,
        });
        continue;
      }
      meta[field] = fieldValue;
    }
    const updatedAt =
      typeof value.updatedAt === "number" && Number.isFinite(value.updatedAt) ? value.updatedAt : undefined;
    records.push({ sessionKey, sessionId: value.sessionId.trim(), updatedAt, meta: meta as SessionMeta });
  }
  if (notOwned.size > 0) {
    const fields = [...notOwned.entries()].map(([field, count]) => `${field} (${count})`).join(", ");
    skipped.push({ file, reason: `fields the kernel does not own were not imported: ${fields}` });
  }
  return { ok: true, records, skipped };
}

function hasKind(value: unknown, kind: FieldKind): boolean {
  switch (kind) {
    case "any":
      return true;
    case "object":
      return isRecord(value);
    case "string[]":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    default:
      return typeof value === kind;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
