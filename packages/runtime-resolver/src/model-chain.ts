// The ordered model candidates of a run and the model a session asks for
// (OpenClaw 2026.9.6 `model-fallback-candidates.ts`, docs/concepts/model-failover.md).
// Owns: requested → configured fallbacks (de-duplicated) → configured
// primary, explicit empty fallbacks, session overrides with their source,
// the allowlist. Does not own: parsing refs (model-ref.ts), running the
// candidates (turn-pipeline).
import type { KernelConfig } from "@agent-kernel/config";
import {
  buildModelAliasIndex,
  hasExactConfiguredProviderModel,
  type ModelAliasIndex,
  type ModelRef,
  modelKey,
  normalizeModelRef,
  normalizeProviderId,
  resolveConfiguredPrimary,
  resolveModelRefFromString,
} from "./model-ref.ts";

export type CandidateOrigin = "requested" | "configured-fallback" | "configured-primary";

export interface ModelCandidate extends ModelRef {
  readonly origin: CandidateOrigin;
}

function agentFallbacks(config: KernelConfig, agentId: string | undefined): readonly string[] {
  const id = agentId?.trim().toLowerCase();
  const entry = id === undefined ? undefined : config.agents.list.find((agent) => agent.id === id);
  // An agent's own primary is strict unless that agent lists its own fallbacks.
  if (entry?.model) return entry.model.fallbacks ?? [];
  return config.agents.defaults.model?.fallbacks ?? [];
}

function aliasFromPair(
  config: KernelConfig,
  aliasIndex: ModelAliasIndex,
  provider: string,
  model: string,
  defaultProvider: string,
): ModelRef | null {
  const bare = resolveModelRefFromString({ config, raw: model, defaultProvider: provider, aliasIndex });
  const qualified = resolveModelRefFromString({
    config,
    raw: `${provider}/${model}`,
    defaultProvider,
    aliasIndex,
  });
  if (qualified?.alias) return qualified.ref;
  const normalized = normalizeProviderId(provider);
  return bare?.alias &&
    (bare.ref.provider === normalized || normalized === normalizeProviderId(defaultProvider))
    ? bare.ref
    : null;
}

/**
 * The models to try, in order: the requested one (alias-resolved unless it is
 * an exact configured route), then `fallbacksOverride` if given, else the
 * agent's own `model.fallbacks`, else `agents.defaults.model.fallbacks`;
 * then, when no override was passed, the configured primary. Duplicates are
 * dropped; `fallbacksOverride: []` means only the requested model.
 */
export function resolveModelCandidateChain(params: {
  config: KernelConfig;
  agentId?: string | undefined;
  provider?: string | undefined;
  model?: string | undefined;
  fallbacksOverride?: readonly string[] | undefined;
}): ModelCandidate[] {
  const { config, agentId } = params;
  const primary = resolveConfiguredPrimary(config, agentId);
  const defaultProvider = primary.provider;
  const providerRaw = params.provider?.trim() || defaultProvider;
  const modelRaw = params.model?.trim() || primary.model;
  const normalizedRequest = normalizeModelRef(providerRaw, modelRaw);
  const aliasIndex = buildModelAliasIndex(config, { agentId, defaultProvider });
  const seen = new Set<string>();
  const candidates: ModelCandidate[] = [];
  const add = (ref: ModelRef, origin: CandidateOrigin) => {
    if (!ref.provider || !ref.model) return;
    const key = JSON.stringify([ref.provider, ref.model]);
    if (seen.has(key)) return;
    seen.add(key);
    candidates.push({ provider: ref.provider, model: ref.model, origin });
  };
  const exactRoute =
    hasExactConfiguredProviderModel(config, normalizedRequest.provider, normalizedRequest.model) ||
    aliasIndex.byKey.has(modelKey(normalizedRequest.provider, normalizedRequest.model));
  add(
    exactRoute
      ? normalizedRequest
      : (aliasFromPair(config, aliasIndex, providerRaw, modelRaw, defaultProvider) ?? normalizedRequest),
    "requested",
  );
  const fallbacks = params.fallbacksOverride ?? agentFallbacks(config, agentId);
  for (const raw of fallbacks) {
    const resolved = resolveModelRefFromString({ config, raw, defaultProvider, aliasIndex });
    if (resolved) add(resolved.ref, "configured-fallback");
  }
  if (params.fallbacksOverride === undefined) add(primary, "configured-primary");
  return candidates;
}

// ---------------------------------------------------------------------------
// Allowlist and session overrides.

/**
 * The allowed model keys: every key of `agents.defaults.models` and the
 * agent's `models` (resolved), or undefined when neither lists any (all allowed).
 */
export function resolveModelAllowlist(
  config: KernelConfig,
  agentId?: string,
): ReadonlySet<string> | undefined {
  const id = agentId?.trim().toLowerCase();
  const entry = id === undefined ? undefined : config.agents.list.find((agent) => agent.id === id);
  const keys = [...Object.keys(config.agents.defaults.models ?? {}), ...Object.keys(entry?.models ?? {})];
  if (keys.length === 0) return undefined;
  const primary = resolveConfiguredPrimary(config, agentId);
  const allowed = new Set<string>();
  for (const raw of keys) {
    const resolved = resolveModelRefFromString({ config, raw, defaultProvider: primary.provider });
    if (resolved) allowed.add(modelKey(resolved.ref.provider, resolved.ref.model));
  }
  return allowed;
}

export function isModelAllowed(allowlist: ReadonlySet<string> | undefined, ref: ModelRef): boolean {
  return allowlist === undefined || allowlist.has(modelKey(ref.provider, ref.model));
}

/** Where the run's model came from. */
export type ModelSource =
  | "request"
  | "session-override:user"
  | "session-override:auto"
  | "cron-payload"
  | "agent"
  | "defaults"
  | "built-in-default";

export interface ModelSelection {
  readonly ref: ModelRef;
  readonly source: ModelSource;
  /** The `@profile` suffix of the chosen ref, if any. */
  readonly authProfile?: string;
  /** The fallbacks override for the candidate chain: `[]` for strict selections, undefined for the configured ones. */
  readonly fallbacksOverride: readonly string[] | undefined;
  /** Notes for the run record, e.g. a session override dropped because it is not allowlisted. */
  readonly notes: readonly string[];
}

export interface SessionModelOverride {
  /** A model ref or alias, as stored on the session (`/model`). */
  readonly model: string;
  readonly source: "user" | "auto";
}

/**
 * Chooses the run's model. Precedence: the request, a cron job's
 * `payload.model` ({primary, fallbacks}), the session override, the agent's
 * model, `agents.defaults.model`, the built-in default. A session override
 * that the allowlist forbids is dropped with a note (OpenClaw resets it); a
 * request or cron model that it forbids is an error. User overrides are strict
 * (no fallbacks); an agent primary is strict unless that agent lists its own
 * `fallbacks`; cron payloads use the configured fallbacks unless they give their own.
 */
export function selectModel(params: {
  config: KernelConfig;
  agentId: string;
  requested?: string | undefined;
  cronPayload?: { primary: string; fallbacks?: readonly string[] | undefined } | undefined;
  sessionOverride?: SessionModelOverride | undefined;
}): ModelSelection {
  const { config, agentId } = params;
  const primary = resolveConfiguredPrimary(config, agentId);
  const aliasIndex = buildModelAliasIndex(config, { agentId, defaultProvider: primary.provider });
  const allowlist = resolveModelAllowlist(config, agentId);
  const notes: string[] = [];
  const resolve = (raw: string, what: string) => {
    const resolved = resolveModelRefFromString({
      config,
      raw,
      defaultProvider: primary.provider,
      aliasIndex,
    });
    if (!resolved)
      throw new Error(`${what} "${raw}" is not a model ref: expected "provider/model" or an alias`);
    return resolved;
  };
  const pick = (
    resolved: ReturnType<typeof resolve>,
    source: ModelSource,
    fallbacksOverride: readonly string[] | undefined,
  ): ModelSelection => ({
    ref: resolved.ref,
    source,
    ...(resolved.profile === undefined ? {} : { authProfile: resolved.profile }),
    fallbacksOverride,
    notes,
  });
  const requireAllowed = (resolved: ReturnType<typeof resolve>, what: string) => {
    if (!isModelAllowed(allowlist, resolved.ref)) {
      throw new Error(
        `${what} "${modelKey(resolved.ref.provider, resolved.ref.model)}" is not allowed for agent "${agentId}" (allowed: ${[...(allowlist ?? [])].join(", ")})`,
      );
    }
  };
  if (params.requested?.trim()) {
    const resolved = resolve(params.requested, "requested model");
    requireAllowed(resolved, "requested model");
    return pick(resolved, "request", undefined);
  }
  if (params.cronPayload) {
    const resolved = resolve(params.cronPayload.primary, "cron payload model");
    requireAllowed(resolved, "cron payload model");
    return pick(resolved, "cron-payload", params.cronPayload.fallbacks);
  }
  if (params.sessionOverride?.model.trim()) {
    const resolved = resolve(params.sessionOverride.model, "session model override");
    if (isModelAllowed(allowlist, resolved.ref)) {
      const source =
        params.sessionOverride.source === "user" ? "session-override:user" : "session-override:auto";
      return pick(resolved, source, params.sessionOverride.source === "user" ? [] : undefined);
    }
    notes.push(
      `session model override "${params.sessionOverride.model}" is not allowlisted; using the configured model`,
    );
  }
  const id = agentId.trim().toLowerCase();
  const entry = config.agents.list.find((agent) => agent.id === id);
  const primaryProfile = (raw: string | undefined) => resolve(raw ?? "", "configured model").profile;
  if (entry?.model) {
    const profile = primaryProfile(entry.model.primary);
    return {
      ref: primary,
      source: "agent",
      ...(profile === undefined ? {} : { authProfile: profile }),
      fallbacksOverride: entry.model.fallbacks === undefined ? [] : undefined,
      notes,
    };
  }
  if (config.agents.defaults.model) {
    const profile = primaryProfile(config.agents.defaults.model.primary);
    return {
      ref: primary,
      source: "defaults",
      ...(profile === undefined ? {} : { authProfile: profile }),
      fallbacksOverride: undefined,
      notes,
    };
  }
  return { ref: primary, source: "built-in-default", fallbacksOverride: undefined, notes };
}
