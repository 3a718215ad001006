// Provider-id and model-id normalisation as OpenClaw 2026.9.6 applies it: the bundled plugins' model-id
// manifests first (Google preview ids, Anthropic aliases, …), then the core rules (a provider's own prefix,
// Vercel and xAI aliases). Owns: those tables and rules. Does not own: parsing a ref, aliases from the
// config or the configured primary (model-ref.ts).

/** Trimmed and lower-cased; undefined as "". */
export const lowerTrim = (value: string | undefined): string => (value ?? "").trim().toLowerCase();

/** Provider ids are compared lower-cased (alias folding lives in provider manifests, not here). */
export function normalizeProviderId(provider: string): string {
  return lowerTrim(provider);
}

// ---------------------------------------------------------------------------
// Model-id normalisation: the bundled plugin manifests first, then core rules.

interface ModelIdPolicy {
  readonly aliases?: Readonly<Record<string, string>>;
  readonly stripPrefixes?: readonly string[];
  readonly prefixWhenBare?: string;
}

const GOOGLE_ALIASES = {
  "gemini-3-pro": "gemini-3.1-pro-preview",
  "gemini-3-pro-preview": "gemini-3.1-pro-preview",
  "gemini-3-flash": "gemini-3-flash-preview",
  "gemini-3.1-pro": "gemini-3.1-pro-preview",
  "gemini-3.1-flash-lite-preview": "gemini-3.1-flash-lite",
  "gemini-3.1-flash": "gemini-3-flash-preview",
  "gemini-3.1-flash-preview": "gemini-3-flash-preview",
};
const ANTHROPIC_ALIASES = {
  fable: "claude-fable-5-1",
  "fable-5": "claude-fable-5",
  "fable-5.1": "claude-fable-5-1",
  "fable-5-1": "claude-fable-5-1",
  haiku: "claude-haiku-4-5",
  "opus-5.5": "claude-opus-5-5",
  "opus-5-5": "claude-opus-5-5",
  "opus-5": "claude-opus-5",
  opus: "claude-opus-5",
  "opus-4.8": "claude-opus-4-8",
  "opus-4.7": "claude-opus-4-7",
  "opus-4.6": "claude-opus-4-6",
  "mythos-5": "claude-mythos-5",
  "sonnet-5": "claude-sonnet-5",
  sonnet: "claude-sonnet-5",
  "sonnet-4.6": "claude-sonnet-4-6",
};

/** `modelIdNormalization` of the plugins bundled with openclaw@2026.9.6 (data, refreshed with the fixtures). */
const MANIFEST_POLICIES: Readonly<Record<string, ModelIdPolicy>> = {
  xai: {
    aliases: {
      "grok-4.3-latest": "grok-4.3",
      "grok-4.5-latest": "grok-4.5",
      "grok-4.7-latest": "grok-4.7",
      "grok-build-latest": "grok-4.5",
    },
  },
  google: { aliases: GOOGLE_ALIASES },
  "google-gemini-cli": { aliases: GOOGLE_ALIASES },
  "google-vertex": { aliases: GOOGLE_ALIASES },
  huggingface: { stripPrefixes: ["huggingface/"] },
  anthropic: { aliases: ANTHROPIC_ALIASES },
  nvidia: { prefixWhenBare: "nvidia" },
  openrouter: { prefixWhenBare: "openrouter" },
};

function applyManifestPolicy(provider: string, model: string): string {
  const policy = Object.hasOwn(MANIFEST_POLICIES, provider) ? MANIFEST_POLICIES[provider] : undefined;
  if (!policy) return model;
  let modelId = model.trim();
  if (!modelId) return modelId;
  for (const prefix of policy.stripPrefixes ?? []) {
    if (modelId.toLowerCase().startsWith(prefix.toLowerCase())) {
      modelId = modelId.slice(prefix.length);
      break;
    }
  }
  const aliased = policy.aliases?.[modelId.toLowerCase()];
  if (aliased !== undefined) modelId = aliased;
  if (!modelId.includes("/") && policy.prefixWhenBare) {
    return `${policy.prefixWhenBare.replace(/\/+$/u, "")}/${modelId.replace(/^\/+/u, "")}`;
  }
  return modelId;
}

/** Google preview model ids folded to their canonical form. */
export function normalizeGooglePreviewModelId(id: string): string {
  if (id.startsWith("google/")) {
    const inner = id.slice(7);
    const normalized = normalizeGooglePreviewModelId(inner);
    return normalized === inner ? id : `google/${normalized}`;
  }
  if (id === "gemini-3-pro" || id === "gemini-3-pro-preview" || id === "gemini-3.1-pro")
    return "gemini-3.1-pro-preview";
  if (id === "gemini-3-flash" || id === "gemini-3.1-flash" || id === "gemini-3.1-flash-preview") {
    return "gemini-3-flash-preview";
  }
  if (id === "gemini-3.1-flash-lite-preview") return "gemini-3.1-flash-lite";
  if (id === "gemma-4-26b") return "gemma-4-26b-a4b-it";
  return id;
}

/** The model id without a leading `<provider>/` of its own provider. */
export function stripSelfProviderPrefix(provider: string, model: string): string {
  const prefix = `${lowerTrim(provider)}/`;
  const trimmed = model.trim();
  return trimmed.toLowerCase().startsWith(prefix) ? trimmed.slice(prefix.length) : model;
}

const VERCEL_ALIASES: Readonly<Record<string, string>> = {
  "opus-4.6": "claude-opus-4-6",
  "sonnet-5": "claude-sonnet-5",
  sonnet: "claude-sonnet-4-6",
  "sonnet-4.6": "claude-sonnet-4-6",
};
const XAI_ALIASES: Readonly<Record<string, string>> = {
  "grok-4.3-latest": "grok-4.3",
  "grok-4.5-latest": "grok-4.5",
  "grok-build-latest": "grok-4.5",
  "grok-4-fast-reasoning": "grok-4-fast",
  "grok-4-1-fast-reasoning": "grok-4-1-fast",
};

function normalizeBuiltInModelId(provider: string, model: string): string {
  if (provider === "google" || provider === "google-gemini-cli" || provider === "google-vertex") {
    return normalizeGooglePreviewModelId(model);
  }
  if (provider === "openrouter" || provider === "nvidia") {
    const trimmed = model.trim();
    return trimmed && !trimmed.includes("/") ? `${provider}/${trimmed}` : model;
  }
  if (provider === "anthropic") {
    const stripped = stripSelfProviderPrefix(provider, model);
    return (ANTHROPIC_ALIASES as Record<string, string>)[stripped.trim().toLowerCase()] ?? stripped;
  }
  if (provider === "vercel-ai-gateway") {
    const aliased = VERCEL_ALIASES[model.trim().toLowerCase()] ?? model;
    return aliased.trim().toLowerCase().startsWith("claude-") ? `anthropic/${aliased}` : aliased;
  }
  if (provider === "huggingface") {
    return model.trim().toLowerCase().startsWith("huggingface/") ? model.slice(12) : model;
  }
  if (provider === "xai") return XAI_ALIASES[model.trim().toLowerCase()] ?? model;
  if (provider === "together") return model === "moonshotai/Kimi-K2.5" ? "moonshotai/Kimi-K2.6" : model;
  return model;
}

/** A model id normalised for its provider: the manifest policy, then the built-in rules. */
export function normalizeStaticModelId(provider: string, model: string): string {
  const normalizedProvider = normalizeProviderId(provider);
  return normalizeBuiltInModelId(normalizedProvider, applyManifestPolicy(normalizedProvider, model));
}
