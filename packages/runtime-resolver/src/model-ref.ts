// Model refs as OpenClaw 2026.9.6 reads them (`model-selection-normalize.ts`,
// `model-ref-shared.ts`, `model-ref-profile.ts`, `model-selection-shared.ts`,
// the bundled plugins' model-id normalisation manifests). Owns: splitting
// `provider/model@profile`, the alias index from `agents.*.models`, resolving
// a string through aliases, the configured primary. Does not own: provider
// and model-id normalisation (model-id-normalise.ts), candidate chains
// (model-chain.ts) or pi-ai Model objects (model-catalog.ts).
import type { KernelConfig } from "@agent-kernel/config";
import {
  lowerTrim,
  normalizeGooglePreviewModelId,
  normalizeProviderId,
  normalizeStaticModelId,
  stripSelfProviderPrefix,
} from "./model-id-normalise.ts";

export { normalizeProviderId } from "./model-id-normalise.ts";

export interface ModelRef {
  /** Lower-cased provider id. */
  readonly provider: string;
  /** The model id, case kept. */
  readonly model: string;
}

/** OpenClaw's built-in default when nothing is configured (2026.9.6). */
export const DEFAULT_PROVIDER = "openai";
export const DEFAULT_MODEL = "gpt-6-astra";

/** `provider/model`, unless the model already starts with `provider/`. */
export function modelKey(provider: string, model: string): string {
  const providerId = provider.trim();
  const modelId = model.trim();
  if (!providerId) return modelId;
  if (!modelId) return providerId;
  return modelId.toLowerCase().startsWith(`${providerId.toLowerCase()}/`)
    ? modelId
    : `${providerId}/${modelId}`;
}

/** Canonical `{provider, model}`: provider lower-cased, the model id normalised per provider. */
export function normalizeModelRef(provider: string, model: string): ModelRef {
  const normalizedProvider = normalizeProviderId(provider);
  return {
    provider: normalizedProvider,
    model: normalizeStaticModelId(
      normalizedProvider,
      stripSelfProviderPrefix(normalizedProvider, model.trim()),
    ),
  };
}

/**
 * `provider/model` split on the first `/` (the model keeps further slashes);
 * no slash means `defaultProvider`. Null for empty input or an empty side.
 * `openrouter:auto` is a compatibility alias for `openrouter/openrouter/auto`.
 */
export function parseModelRef(raw: string, defaultProvider: string): ModelRef | null {
  const trimmed = raw.trim();
  if (!trimmed) return null;
  if (trimmed.toLowerCase() === "openrouter:auto") return normalizeModelRef("openrouter", "auto");
  const slash = trimmed.indexOf("/");
  if (slash === -1) return normalizeModelRef(defaultProvider, trimmed);
  const provider = trimmed.slice(0, slash).trim();
  const model = trimmed.slice(slash + 1).trim();
  if (!provider || !model) return null;
  return normalizeModelRef(provider, model);
}

/**
 * Splits a trailing `@<authProfile>` off a ref, keeping `@cf/...` path
 * segments, dated suffixes (`@20250929`) and quantisation suffixes (`@q4_k_m`).
 */
export function splitTrailingAuthProfile(raw: string): { model: string; profile?: string } {
  const trimmed = raw.trim();
  if (!trimmed) return { model: "" };
  const lastSlash = trimmed.lastIndexOf("/");
  let delimiter = trimmed.indexOf("@", lastSlash + 1);
  if (delimiter <= 0) return { model: trimmed };
  const suffix = () => trimmed.slice(delimiter + 1);
  if (/^\d{8}(?:@|$)/.test(suffix())) {
    const next = trimmed.indexOf("@", delimiter + 9);
    if (next < 0) return { model: trimmed };
    delimiter = next;
  }
  if (/^(?:i?q\d+(?:_[a-z0-9]+)*|\d+bit)(?:@|$)/i.test(suffix())) {
    const next = trimmed.indexOf("@", delimiter + 1);
    if (next < 0) return { model: trimmed };
    delimiter = next;
  }
  const model = trimmed.slice(0, delimiter).trim();
  const profile = trimmed.slice(delimiter + 1).trim();
  return model && profile ? { model, profile } : { model: trimmed };
}

// ---------------------------------------------------------------------------
// Configured providers and aliases.

type CustomProviders = KernelConfig["models"]["providers"];
type ProviderConfig = CustomProviders[string];

function findConfiguredProvider(
  config: KernelConfig,
  provider: string,
): [string, ProviderConfig] | undefined {
  const key = normalizeProviderId(provider);
  return Object.entries(config.models.providers).find(([id]) => normalizeProviderId(id) === key);
}

/** True when `models.providers.<provider>.models` lists exactly this model id. */
export function hasExactConfiguredProviderModel(
  config: KernelConfig,
  provider: string,
  model: string,
): boolean {
  const trimmed = model.trim();
  const configured = findConfiguredProvider(config, provider)?.[1];
  return Boolean(trimmed && configured?.models.some((entry) => entry.id.trim() === trimmed));
}

function normalizeCatalogRef(providerModel: string): string {
  if (providerModel.startsWith("google/")) {
    const inner = providerModel.slice(7);
    const normalized = normalizeGooglePreviewModelId(inner);
    return normalized === inner ? providerModel : `google/${normalized}`;
  }
  const slash = providerModel.indexOf("/");
  if (slash <= 0) return providerModel;
  const inner = providerModel.slice(slash + 1);
  if (!inner.startsWith("google/")) return providerModel;
  const normalized = normalizeGooglePreviewModelId(inner);
  return normalized === inner
    ? providerModel
    : `${providerModel.slice(0, slash).toLowerCase()}/${normalized}`;
}

/** A ref naming a configured custom provider keeps that provider's own model ids. */
function exactConfiguredProviderRef(config: KernelConfig, raw: string): ModelRef | null {
  const slash = raw.indexOf("/");
  if (slash <= 0) return null;
  const providerRaw = raw.slice(0, slash).trim();
  const modelRaw = raw.slice(slash + 1).trim();
  if (!providerRaw || !modelRaw) return null;
  const configured = findConfiguredProvider(config, providerRaw);
  if (!configured) return null;
  const provider = normalizeProviderId(configured[0]);
  if (normalizeProviderId(configured[1].api) === provider) return null;
  return { provider, model: normalizeCatalogRef(normalizeStaticModelId(provider, modelRaw)) };
}

function parseWithConfiguredProviders(
  config: KernelConfig,
  raw: string,
  defaultProvider: string,
): ModelRef | null {
  if (lowerTrim(raw) === "openrouter:auto") return normalizeModelRef("openrouter", "auto");
  return (
    exactConfiguredProviderRef(config, raw) ??
    (raw.includes("/") ? null : exactConfiguredProviderRef(config, `${defaultProvider}/${raw}`)) ??
    parseModelRef(raw, defaultProvider)
  );
}

export interface ModelAlias {
  readonly alias: string;
  readonly ref: ModelRef;
}

export interface ModelAliasIndex {
  /** Lower-cased alias → its ref. */
  readonly byAlias: ReadonlyMap<string, ModelAlias>;
  /** `provider/lower-cased alias` → its ref (`openai/mini`). */
  readonly byProviderAlias: ReadonlyMap<string, ModelAlias>;
  /** Canonical model key → its aliases. */
  readonly byKey: ReadonlyMap<string, readonly string[]>;
}

interface AliasCandidate extends ModelAlias {
  readonly keyRaw: string;
}

function agentEntry(config: KernelConfig, agentId: string | undefined) {
  if (agentId === undefined) return undefined;
  const id = agentId.trim().toLowerCase();
  return config.agents.list.find((agent) => agent.id === id);
}

/** Aliases of `agents.defaults.models`, then the agent's own `models`; a later key wins. */
function aliasCandidates(
  config: KernelConfig,
  agentId: string | undefined,
  defaultProvider: string,
): AliasCandidate[] {
  const byKey = new Map<string, AliasCandidate>();
  for (const models of [config.agents.defaults.models, agentEntry(config, agentId)?.models]) {
    for (const [keyRaw, entry] of Object.entries(models ?? {})) {
      if (entry.alias === undefined || keyRaw.trim().endsWith("/*")) continue;
      const ref = parseWithConfiguredProviders(config, keyRaw, defaultProvider);
      if (!ref) continue;
      const key = modelKey(ref.provider, ref.model);
      byKey.delete(key);
      byKey.set(key, { keyRaw, alias: entry.alias.trim(), ref });
    }
  }
  return [...byKey.values()];
}

/** The alias index of `agents.defaults.models` and the agent's own `models`. */
export function buildModelAliasIndex(
  config: KernelConfig,
  options: { agentId?: string | undefined; defaultProvider?: string | undefined } = {},
): ModelAliasIndex {
  const byAlias = new Map<string, ModelAlias>();
  const byProviderAlias = new Map<string, ModelAlias>();
  const byKey = new Map<string, readonly string[]>();
  for (const { alias, ref } of aliasCandidates(
    config,
    options.agentId,
    options.defaultProvider ?? DEFAULT_PROVIDER,
  )) {
    const match = { alias, ref };
    byAlias.set(alias.toLowerCase(), match);
    byProviderAlias.set(`${ref.provider}/${alias.toLowerCase()}`, match);
    byKey.set(modelKey(ref.provider, ref.model), [alias]);
  }
  return { byAlias, byProviderAlias, byKey };
}

export interface ResolvedModelRef {
  readonly ref: ModelRef;
  /** The alias the string matched, when it was one. */
  readonly alias?: string;
  /** The `@profile` suffix, when one was given. */
  readonly profile?: string;
}

/**
 * A user or config string → a ref: the `@profile` suffix comes off, then the
 * alias (slash-form aliases win over provider/model parsing), then
 * `provider/alias`, then a configured custom provider, then plain parsing.
 */
export function resolveModelRefFromString(params: {
  config: KernelConfig;
  raw: string;
  defaultProvider: string;
  aliasIndex?: ModelAliasIndex | undefined;
}): ResolvedModelRef | null {
  const { model, profile } = splitTrailingAuthProfile(params.raw);
  if (!model) return null;
  const withProfile = profile === undefined ? {} : { profile };
  const aliasMatch = params.aliasIndex?.byAlias.get(model.toLowerCase());
  if (aliasMatch) return { ref: aliasMatch.ref, alias: aliasMatch.alias, ...withProfile };
  const slash = model.indexOf("/");
  if (slash > 0) {
    const key = `${normalizeProviderId(model.slice(0, slash))}/${lowerTrim(model.slice(slash + 1))}`;
    const providerAlias = params.aliasIndex?.byProviderAlias.get(key);
    if (providerAlias) return { ref: providerAlias.ref, alias: providerAlias.alias, ...withProfile };
  }
  const ref = parseWithConfiguredProviders(params.config, model, params.defaultProvider);
  return ref ? { ref, ...withProfile } : null;
}

// ---------------------------------------------------------------------------
// The configured primary.

function inferUniqueProvider(
  config: KernelConfig,
  agentId: string | undefined,
  model: string,
): string | undefined {
  const wanted = model.trim();
  if (!wanted) return undefined;
  const matcher = () => {
    const exact = new Set<string>();
    const folded = new Set<string>();
    return {
      add(provider: string, ...ids: string[]) {
        const id = normalizeProviderId(provider);
        if (!id) return;
        if (ids.some((candidate) => candidate.trim() === wanted)) exact.add(id);
        else if (ids.some((candidate) => lowerTrim(candidate) === wanted.toLowerCase())) folded.add(id);
      },
      matches: () => (exact.size > 0 ? exact : folded),
    };
  };
  const fromModelMap = (models: Record<string, unknown> | undefined) => {
    const m = matcher();
    for (const key of Object.keys(models ?? {})) {
      const ref = key.trim();
      if (!ref.includes("/") || ref.endsWith("/*")) continue;
      const parsed = parseModelRef(ref, DEFAULT_PROVIDER);
      if (parsed) m.add(parsed.provider, parsed.model);
    }
    return m;
  };
  const only = (set: Set<string>) => (set.size === 1 ? [...set][0] : undefined);
  const agentModels = agentEntry(config, agentId)?.models;
  if (agentModels) {
    const matches = fromModelMap(agentModels).matches();
    if (matches.size > 0) return only(matches);
  }
  const m = fromModelMap(config.agents.defaults.models);
  for (const [providerId, provider] of Object.entries(config.models.providers)) {
    for (const entry of provider.models) {
      const id = entry.id.trim();
      if (id) m.add(providerId, id, normalizeCatalogRef(normalizeStaticModelId(providerId, id)));
    }
  }
  return only(m.matches());
}

/** The agent's primary ref string (its own, else `agents.defaults.model.primary`), if any. */
export function configuredPrimaryRaw(config: KernelConfig, agentId: string | undefined): string | undefined {
  return agentEntry(config, agentId)?.model?.primary ?? config.agents.defaults.model?.primary;
}

/**
 * The configured primary model of an agent (OpenClaw's
 * resolveConfiguredModelRef): aliases, `@profile`, configured custom
 * providers, a bare model id matched to the one provider that lists it,
 * else `openai/gpt-6-astra` (or the first custom provider's first model).
 */
export function resolveConfiguredPrimary(config: KernelConfig, agentId?: string): ModelRef {
  const rawModel = configuredPrimaryRaw(config, agentId) ?? "";
  if (rawModel) {
    const trimmed = rawModel.trim();
    const { model: withoutProfile } = splitTrailingAuthProfile(trimmed);
    const profileStripped = Boolean(withoutProfile && withoutProfile !== trimmed);
    const slash = withoutProfile.indexOf("/");
    const qualifiedProvider = slash > 0 ? withoutProfile.slice(0, slash) : undefined;
    const qualifiedModel = qualifiedProvider ? withoutProfile.slice(slash + 1) : undefined;
    const candidates = aliasCandidates(config, agentId, DEFAULT_PROVIDER);
    const find = (raw: string, provider?: string) =>
      candidates.findLast(
        (c) =>
          c.alias.toLowerCase() === lowerTrim(raw) &&
          (provider === undefined || c.ref.provider === normalizeProviderId(provider)),
      );
    const exactAlias = find(trimmed);
    if (profileStripped) {
      const profileAlias = exactAlias ?? find(withoutProfile);
      if (profileAlias) return profileAlias.ref;
    }
    if (!exactAlias && qualifiedProvider && qualifiedModel) {
      const qualified = find(qualifiedModel, qualifiedProvider);
      if (qualified && !hasExactConfiguredProviderModel(config, qualifiedProvider, qualifiedModel))
        return qualified.ref;
    }
    const primaryWithoutProfile = withoutProfile || trimmed;
    const exactConfigured = exactConfiguredProviderRef(config, primaryWithoutProfile);
    if (exactConfigured) return exactConfigured;
    const aliasCandidate = profileStripped ? undefined : exactAlias;
    const slashForm = (raw: string) => {
      const t = raw.trim();
      const i = t.indexOf("/");
      return i > 0 && i < t.length - 1;
    };
    if (aliasCandidate && slashForm(primaryWithoutProfile) && !slashForm(aliasCandidate.keyRaw)) {
      const parsed = parseWithConfiguredProviders(config, primaryWithoutProfile, DEFAULT_PROVIDER);
      if (parsed) return parsed;
    }
    if (aliasCandidate) return aliasCandidate.ref;
    if (!trimmed.includes("/")) {
      if (lowerTrim(trimmed) === "openrouter:auto") return normalizeModelRef("openrouter", "auto");
      const inferred = inferUniqueProvider(config, agentId, trimmed);
      if (inferred) return normalizeModelRef(inferred, trimmed);
    }
    const resolved = resolveModelRefFromString({ config, raw: trimmed, defaultProvider: DEFAULT_PROVIDER });
    if (resolved) return resolved.ref;
  }
  return configuredProviderFallback(config) ?? { provider: DEFAULT_PROVIDER, model: DEFAULT_MODEL };
}

function configuredProviderFallback(config: KernelConfig): ModelRef | null {
  const providers = config.models.providers;
  const defaultProvider = findConfiguredProvider(config, DEFAULT_PROVIDER)?.[1];
  const hasAny = (defaultProvider?.models.length ?? 0) > 0;
  const hasDefault = defaultProvider?.models.some((m) => m.id === DEFAULT_MODEL) ?? false;
  if (hasAny && hasDefault) return null;
  for (const [provider, providerConfig] of Object.entries(providers)) {
    const first = providerConfig.models[0];
    if (first?.id) return { provider: normalizeProviderId(provider), model: first.id };
  }
  return null;
}
