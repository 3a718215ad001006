// Model refs → real pi-ai `Model` objects. Owns: looking a ref up in the
// config's custom providers (`models.providers.<id>`: an OpenAI- or
// Anthropic-compatible server with a baseUrl) and in pi-ai's built-in catalog,
// the clear error for an unknown model, and the context-token precedence.
// Does not own: credentials (auth-profiles.ts) or streaming (turn-pipeline).
import { closestMatch, DEFAULT_CONTEXT_TOKENS, type KernelConfig } from "@agent-kernel/config";
import type { Api, Model } from "@earendil-works/pi-ai";
import {
  type BuiltinProvider,
  getBuiltinModels,
  getBuiltinProviders,
} from "@earendil-works/pi-ai/providers/all";
import { type ModelRef, modelKey, normalizeProviderId } from "./model-ref.ts";

/** Used for a custom model that states no `maxTokens`. */
export const DEFAULT_CUSTOM_MAX_TOKENS = 8192;

export type ModelOrigin = "custom-provider" | "catalog";

export interface CatalogModel {
  readonly model: Model<Api>;
  readonly origin: ModelOrigin;
}

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

function customProviderModels(config: KernelConfig, provider: string): Model<Api>[] | undefined {
  const entry = Object.entries(config.models.providers).find(([id]) => normalizeProviderId(id) === provider);
  if (!entry) return undefined;
  const [, providerConfig] = entry;
  return providerConfig.models.map(
    (m): Model<Api> => ({
      id: m.id,
      name: m.name ?? m.id,
      api: providerConfig.api,
      provider,
      baseUrl: providerConfig.baseUrl,
      reasoning: m.reasoning ?? false,
      input: m.input ?? ["text"],
      cost: ZERO_COST,
      contextWindow: m.contextWindow ?? DEFAULT_CONTEXT_TOKENS,
      maxTokens: m.maxTokens ?? DEFAULT_CUSTOM_MAX_TOKENS,
      ...(providerConfig.headers ? { headers: { ...providerConfig.headers } } : {}),
    }),
  );
}

function builtinModels(provider: string): Model<Api>[] | undefined {
  const known = (getBuiltinProviders() as string[]).includes(provider);
  return known ? (getBuiltinModels(provider as BuiltinProvider) as Model<Api>[]) : undefined;
}

/**
 * The pi-ai model for a ref: a configured custom provider first (its models
 * only), else pi-ai's built-in catalog. Throws naming the ref and the nearest
 * known model when there is none.
 */
export function resolveCatalogModel(config: KernelConfig, ref: ModelRef): CatalogModel {
  const provider = normalizeProviderId(ref.provider);
  const custom = customProviderModels(config, provider);
  const models = custom ?? builtinModels(provider);
  const key = modelKey(provider, ref.model);
  if (!models) {
    const providers = [...Object.keys(config.models.providers), ...getBuiltinProviders()];
    const suggestion = closestMatch(provider, providers);
    throw new Error(
      `unknown provider "${provider}" for model "${key}"${suggestion ? `; did you mean "${suggestion}"?` : ""} (add it under models.providers with a baseUrl)`,
    );
  }
  const model =
    models.find((m) => m.id === ref.model) ??
    models.find((m) => m.id.toLowerCase() === ref.model.toLowerCase());
  if (!model) {
    const suggestion = closestMatch(
      ref.model,
      models.map((m) => m.id),
    );
    throw new Error(
      `unknown model "${key}"${suggestion ? `; did you mean "${provider}/${suggestion}"?` : ""} (${custom ? "models.providers." : "pi-ai catalog for "}${provider} has ${models.length} models)`,
    );
  }
  return { model: { ...model }, origin: custom ? "custom-provider" : "catalog" };
}

export type ContextTokensSource = "agent" | "model" | "session" | "default";

/**
 * The context window a run budgets for: the agent's `contextTokens` override,
 * else the model's window, else the session's previous value (follow-up
 * runs), else 200 000.
 */
export function resolveContextTokens(params: {
  agentContextTokens?: number | undefined;
  model?: Model<Api> | undefined;
  sessionContextTokens?: number | undefined;
}): { value: number; source: ContextTokensSource } {
  const positive = (value: number | undefined): value is number =>
    typeof value === "number" && Number.isFinite(value) && value > 0;
  if (positive(params.agentContextTokens)) return { value: params.agentContextTokens, source: "agent" };
  if (positive(params.model?.contextWindow)) return { value: params.model.contextWindow, source: "model" };
  if (positive(params.sessionContextTokens)) return { value: params.sessionContextTokens, source: "session" };
  return { value: DEFAULT_CONTEXT_TOKENS, source: "default" };
}
