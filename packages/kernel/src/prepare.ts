// `prepareSession`: from a validated input to a `PreparedSession`. Owns: reading what the store knows about
// the session (its row, auth-profile usage), resolving runtime and identity (runtime-resolver), creating or
// resetting the session row to the resolved sessionId, the tool policy for that runtime and message context
// (tool-policy) with the decision for every tool the executor can offer, and the shared defaults (timeout,
// reasoning, verbose, block streaming, context tokens). Also the fingerprints the prewarm cache compares.
// Does not own: the rules it applies (those packages), caching (prewarm-cache.ts) or running (kernel.ts).
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { type KernelConfig, resolveAgentConfig } from "@agent-kernel/config";
import {
  type CurrentSessionState,
  isSessionStale,
  loadProfileUsage,
  type PathOptions,
  type ProfileUsageStats,
  type RuntimeContext,
  type RuntimeRequest,
  resolveRuntime,
  resolveSessionIdentity,
} from "@agent-kernel/runtime-resolver";
import {
  authProfileOverrideSource,
  modelOverrideSource,
  type SessionRecord,
  type SessionStore,
} from "@agent-kernel/session-store";
import {
  resolveToolPolicy,
  subagentDepthFromSessionKey,
  type ToolPolicyContext,
} from "@agent-kernel/tool-policy";
import {
  applyPatchOffered,
  buildDefaultTools,
  memoryOffered,
  type ReasoningMode,
  resolveCoalesceSettings,
} from "@agent-kernel/turn-pipeline";
import type { MessageContext, NormalizedDefaults, PreparedSession, SessionKernelInput } from "./types.ts";

export const DEFAULT_ENTRY_POINT = "agent";

/** What `prepareSession` needs besides the input. */
export interface PrepareDeps {
  readonly config: KernelConfig;
  readonly store: SessionStore;
  /** Environment, home and cwd for path resolution (tests pin them). */
  readonly paths?: PathOptions | undefined;
  readonly now?: (() => number) | undefined;
  readonly newSessionId?: (() => string) | undefined;
}

/** What the store knows before resolving: read once, used by the resolution and the prewarm check. */
export interface SessionSnapshot {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly row: SessionRecord | undefined;
  readonly authUsage: Readonly<Record<string, ProfileUsageStats>>;
}

/** Reads an agent's auth-profile usage (the kernel shares one read among concurrent preparations). */
export type AuthUsageReader = (
  agentId: string,
  now: number,
) => Promise<Readonly<Record<string, ProfileUsageStats>>>;

export async function readSessionSnapshot(
  input: SessionKernelInput,
  config: KernelConfig,
  deps: PrepareDeps,
  now: number,
  readAuthUsage: AuthUsageReader = (agentId, at) => loadProfileUsage(deps.store.auth, agentId, at),
): Promise<SessionSnapshot> {
  const identity = resolveSessionIdentity(config, input, deps.paths ?? {});
  const [row, authUsage] = await Promise.all([
    deps.store.sessions.get({ agentId: identity.agentId, sessionKey: identity.sessionKey }),
    readAuthUsage(identity.agentId, now),
  ]);
  return { agentId: identity.agentId, sessionKey: identity.sessionKey, row, authUsage };
}

/** The stored session as runtime-resolver reads it. */
export function currentSessionState(row: SessionRecord | undefined): CurrentSessionState {
  if (row === undefined) return {};
  const meta = row.meta;
  const source = modelOverrideSource(meta);
  const model =
    meta.modelOverride && source
      ? meta.providerOverride && !meta.modelOverride.includes("/")
        ? `${meta.providerOverride}/${meta.modelOverride}`
        : meta.modelOverride
      : undefined;
  const authSource = authProfileOverrideSource(meta);
  return {
    sessionId: row.sessionId,
    lastActivityAt: meta.lastActivityAt ?? row.updatedAt,
    ...(model && source ? { modelOverride: { model, source } } : {}),
    ...(meta.authProfileOverride && authSource
      ? { authProfileOverride: { profileId: meta.authProfileOverride, source: authSource } }
      : {}),
    ...(meta.thinkingLevel === undefined ? {} : { thinkingLevel: meta.thinkingLevel }),
    ...(meta.contextTokens === undefined ? {} : { contextTokens: meta.contextTokens }),
    queue: {
      queueMode: meta.queueMode,
      queueDebounceMs: meta.queueDebounceMs,
      queueCap: meta.queueCap,
      queueDrop: meta.queueDrop as NonNullable<CurrentSessionState["queue"]>["queueDrop"],
    },
  };
}

function runtimeRequest(input: SessionKernelInput): RuntimeRequest {
  const options = input.runOptions ?? {};
  return {
    model: options.model,
    thinking: options.thinking,
    thinkingStrict: options.thinkingStrict,
    cronPayload: options.cronPayload,
    timeoutSeconds: options.timeoutSeconds,
    channel: input.messageContext?.channel,
    queueMode: options.queueMode,
    forceNewSession: options.forceNewSession,
    sandboxRequired: options.sandboxRequired,
    useSessionContextTokens: options.useSessionContextTokens,
  };
}

const REASONING_MODES: Readonly<Record<string, ReasoningMode>> = { off: "off", on: "on", stream: "stream" };

function normalizeDefaults(
  config: KernelConfig,
  input: SessionKernelInput,
  agentId: string,
  timeoutMs: number,
  contextTokens: number,
): NormalizedDefaults {
  const agent = resolveAgentConfig(config, agentId);
  if (agent === undefined) throw new Error(`agent "${agentId}" has no configuration`);
  const options = input.runOptions ?? {};
  const channel = input.messageContext?.channel;
  const chunk = agent.blockStreamingChunk;
  const blockStreaming =
    agent.blockStreamingDefault === "on"
      ? {
          blockStreaming: {
            chunking: {
              minChars: chunk.minChars,
              maxChars: chunk.maxChars,
              breakPreference: chunk.breakPreference,
            },
            breakMode: agent.blockStreamingBreak,
            coalesce: resolveCoalesceSettings({
              chunk,
              coalesce: agent.blockStreamingCoalesce,
              ...(channel === undefined ? {} : { channel }),
            }),
          },
        }
      : {};
  return {
    entryPoint: options.entryPoint ?? DEFAULT_ENTRY_POINT,
    timeoutMs,
    reasoningMode: REASONING_MODES[agent.reasoningDefault] ?? "off",
    verboseLevel: agent.verboseDefault,
    promptMode: options.promptMode ?? "full",
    enforceFinalTag: options.enforceFinalTag ?? false,
    ...blockStreaming,
    contextTokens,
  };
}

/**
 * Whether people other than the owner can reach the session (tool-policy's non-owner-host layer): a sender
 * who is not the owner, a group or channel conversation, or a channel (its account's setting first) whose
 * DMs are `open`. A turn without a message context (CLI, cron) is the owner's.
 */
function reachableByNonOwners(config: KernelConfig, context: MessageContext): boolean {
  if (context.senderIsOwner === false) return true;
  if (context.chatType === "group" || context.chatType === "channel") return true;
  const channelId = context.channel?.trim().toLowerCase();
  const channel = channelId === undefined ? undefined : config.channels[channelId];
  if (channel === undefined) return false;
  const accounts = channel.accounts ?? {};
  const accountId = context.accountId;
  const accountKey =
    accountId === undefined
      ? undefined
      : Object.hasOwn(accounts, accountId)
        ? accountId
        : Object.keys(accounts).find((key) => key.toLowerCase() === accountId.toLowerCase());
  const account = accountKey === undefined ? undefined : accounts[accountKey];
  return (account?.dmPolicy ?? channel.dmPolicy) === "open";
}

/** The names of every tool the executor can offer, memory tools included (see `resolvePreparedSession`). */
let allToolNames: readonly string[] | undefined;
/** `allToolNames` less the tools a config leaves out, one list per combination (the same array each turn). */
const offeredByLeftOut = new Map<string, readonly string[]>();

/** The tools a turn's model is offered before its policy: web_fetch, apply_patch and memory by config. */
function offeredToolNamesFor(
  config: KernelConfig,
  runtime: RuntimeContext,
  store: SessionStore,
): readonly string[] {
  allToolNames ??= buildDefaultTools({
    workspaceDir: runtime.workspaceDir.value,
    agentId: runtime.agentId.value,
    store,
    messageSink: { send: async () => ({}) },
    memory: true,
  }).map((tool) => tool.name);
  const leftOut: string[] = [];
  if (config.tools.web?.fetch?.enabled === false) leftOut.push("web_fetch");
  if (!applyPatchOffered({ config, runtime })) leftOut.push("apply_patch");
  if (!memoryOffered({ config, agentId: runtime.agentId.value })) leftOut.push("memory_search", "memory_get");
  const key = leftOut.join(",");
  let names = offeredByLeftOut.get(key);
  if (names === undefined) {
    names = allToolNames.filter((name) => !leftOut.includes(name));
    offeredByLeftOut.set(key, names);
  }
  return names;
}

/**
 * Resolves everything a turn needs. Writes only the session row: created on first use, reset to the
 * resolved sessionId when that differs from the stored one (stale, forced or a caller's id).
 */
export async function resolvePreparedSession(
  input: SessionKernelInput,
  config: KernelConfig,
  snapshot: SessionSnapshot,
  deps: PrepareDeps,
  now: number,
): Promise<{ prepared: PreparedSession; row: SessionRecord; workMs: number }> {
  // Its own work: the synchronous segments, not the awaits on the store (see `KernelPhaseTimings`).
  let since = performance.now();
  let workMs = 0;
  const runtime = resolveRuntime({
    ...(deps.paths ?? {}),
    config,
    session: {
      agentId: input.agentId,
      sessionKey: input.sessionKey,
      sessionId: input.sessionId,
      workspaceDir: input.workspaceDir,
      agentDir: input.agentDir,
    },
    current: currentSessionState(snapshot.row),
    request: runtimeRequest(input),
    authUsage: snapshot.authUsage,
    now,
    ...(deps.newSessionId ? { newSessionId: deps.newSessionId } : {}),
  });
  const ref = { agentId: runtime.agentId.value, sessionKey: runtime.sessionKey.value };
  const sessionId = runtime.sessionId.value;
  const context = input.messageContext ?? {};
  let row = snapshot.row;
  if (row === undefined) {
    const ensuring = deps.store.sessions.ensure({
      ...ref,
      sessionId,
      meta: {
        sessionStartedAt: now,
        ...(context.channel === undefined ? {} : { channel: context.channel }),
        ...(context.chatType === undefined ? {} : { chatType: context.chatType }),
      },
      now,
    });
    workMs += performance.now() - since;
    row = await ensuring;
    if (row.sessionId !== sessionId) {
      // Another process (or kernel) created the session first: its row is the session, so resolve against
      // it (a turn under our own new id would write a second transcript for the same key).
      const again = await resolvePreparedSession(input, config, { ...snapshot, row }, deps, now);
      return { ...again, workMs: workMs + again.workMs };
    }
    since = performance.now();
  } else if (row.sessionId !== sessionId) {
    const resetting = deps.store.sessions.reset(ref, { sessionId, now });
    workMs += performance.now() - since;
    row = (await resetting).current;
    since = performance.now();
  }

  const toolPolicyContext: ToolPolicyContext = {
    agentId: runtime.agentId.value,
    modelProvider: runtime.model.value.provider,
    modelId: runtime.model.value.model,
    sandboxed: runtime.sandbox.sandboxed,
    spawnDepth: row.meta.spawnDepth ?? subagentDepthFromSessionKey(runtime.sessionKey.value),
    ...(context.channel === undefined ? {} : { channel: context.channel }),
    ...(context.groupId === undefined ? {} : { groupId: context.groupId }),
    ...(context.senderId === undefined ? {} : { senderId: context.senderId }),
    ...(context.senderIsOwner === undefined ? {} : { senderIsOwner: context.senderIsOwner }),
    reachableByNonOwners: reachableByNonOwners(config, context),
  };
  const toolPolicy = resolveToolPolicy(config, toolPolicyContext);
  // Explain exactly the tools the executor offers this turn's model (the `message` tool included).
  const offered = offeredToolNamesFor(config, runtime, deps.store);

  const prepared: PreparedSession = {
    session: input,
    config,
    runtimeContext: runtime,
    toolPolicy,
    toolPolicyContext,
    toolDecisions: toolPolicy.explain(offered),
    transcript: { agentId: runtime.agentId.value, sessionId },
    defaults: normalizeDefaults(
      config,
      input,
      runtime.agentId.value,
      runtime.timeoutMs.value,
      runtime.contextTokens.value,
    ),
    sessionVersion: row.version,
  };
  Object.freeze(prepared);
  workMs += performance.now() - since;
  return { prepared, row, workMs };
}

/** `prepareSession` without a kernel (no cache): validate first with `validateSessionInput`. */
export async function prepareSession(input: SessionKernelInput, deps: PrepareDeps): Promise<PreparedSession> {
  const now = (deps.now ?? Date.now)();
  const config = input.config ?? deps.config;
  const snapshot = await readSessionSnapshot(input, config, deps, now);
  return (await resolvePreparedSession(input, config, snapshot, deps, now)).prepared;
}

// ── fingerprints for the prewarm cache ──────────────────────────────────────────────────────────────────

function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "undefined";
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableStringify(item)}`).join(",")}}`;
}

export function hashOf(value: unknown): string {
  return createHash("sha1").update(stableStringify(value)).digest("hex");
}

/**
 * `value` as canonical text (keys sorted, undefined left out): what the prewarm cache compares on every
 * `prepareSession`. Compared as text, not as a hash of it: three SHA-1s per call were a third of a cache
 * hit's own work, and the texts are short (an input, a session's resolution fields, its auth usage).
 */
export function fingerprintText(value: unknown): string {
  return stableStringify(value);
}

const configHashes = new WeakMap<object, string>();

/** A content hash of the config, computed once per config object (configs are immutable values). */
export function configFingerprint(config: KernelConfig): string {
  let hash = configHashes.get(config);
  if (hash === undefined) {
    hash = hashOf(config);
    configHashes.set(config, hash);
  }
  return hash;
}

/** The input minus its config (hashed separately). */
export function inputFingerprint(input: SessionKernelInput): string {
  return createHash("sha1").update(inputFingerprintText(input)).digest("hex");
}

/** `inputFingerprint` before hashing. */
export function inputFingerprintText(input: SessionKernelInput): string {
  const { config: _config, ...rest } = input;
  return stableStringify(rest);
}

/**
 * What the stored session contributes to a preparation: its id and the fields resolution reads (overrides,
 * levels, queue settings, lineage). The kernel's own after-run writes (usage, model used, flags) are not in
 * it, so a session's second turn reuses its first preparation.
 */
export function sessionFingerprint(row: SessionRecord | undefined, input: SessionKernelInput): string {
  if (row === undefined) return "none";
  return createHash("sha1").update(sessionFingerprintText(row, input)).digest("hex");
}

/** `sessionFingerprint` before hashing ("none" without a row). */
export function sessionFingerprintText(row: SessionRecord | undefined, input: SessionKernelInput): string {
  if (row === undefined) return "none";
  const { lastActivityAt: _activity, contextTokens, ...rest } = currentSessionState(row);
  return stableStringify({
    ...rest,
    spawnDepth: row.meta.spawnDepth,
    // Read only by follow-up runs; otherwise it is an after-run write.
    ...(input.runOptions?.useSessionContextTokens ? { contextTokens } : {}),
  });
}

/** Whether a preparation made without a caller's sessionId would now pick a new one (reset rules). */
export function isStoredSessionStale(
  config: KernelConfig,
  row: SessionRecord | undefined,
  now: number,
): boolean {
  if (row === undefined) return true;
  return isSessionStale(config.session.reset, row.meta.lastActivityAt ?? row.updatedAt, now);
}
