// Hermetic pi model runtimes, one per (provider, auth profile). Owns: creating a `ModelRuntime` that reads
// nothing from disk (in-memory credentials, no models.json, no catalog refresh), putting the resolved profile's
// secret into it (a custom provider gets a kernel-built pi-ai provider whose auth returns that secret; a
// built-in one gets a runtime API key), mapping a model ref to the pi `Model` that runtime streams with, and
// caching runtimes so a warm turn does not pay the ≈2 ms a new runtime costs (pi-sdk.md §8d). Does not own:
// which profile to use (runtime-resolver) or any state between turns beyond the cache.
//
// Why one runtime per profile and not one shared runtime with per-request keys: pi's `prompt()` preflights
// `hasConfiguredAuth(provider)` on the runtime, and a runtime holds one credential per provider, so two turns
// of one process using two profiles of the same provider would race on a shared runtime.
import type { KernelConfig } from "@agent-kernel/config";
import { type ModelRef, resolveCatalogModel } from "@agent-kernel/runtime-resolver";
import {
  type Api,
  createProvider,
  InMemoryCredentialStore,
  type Model,
  type Provider,
  type ProviderStreams,
} from "@earendil-works/pi-ai";
import { anthropicMessagesApi } from "@earendil-works/pi-ai/api/anthropic-messages.lazy";
import { googleGenerativeAIApi } from "@earendil-works/pi-ai/api/google-generative-ai.lazy";
import { openAICompletionsApi } from "@earendil-works/pi-ai/api/openai-completions.lazy";
import { openAIResponsesApi } from "@earendil-works/pi-ai/api/openai-responses.lazy";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";

/** The credential an attempt runs with: a profile's secret, or none (ambient env keys, keyless servers). */
export interface AttemptCredential {
  readonly profileId?: string | undefined;
  readonly secret?: string | undefined;
}

export interface ModelRuntimePoolOptions {
  readonly config: KernelConfig;
  /**
   * Providers registered as they are in every runtime, taking precedence over the config's provider of the
   * same id (tests and benchmarks pass pi's faux provider here).
   */
  readonly nativeProviders?: readonly Provider[];
}

/** Keyless custom providers still need a non-empty key for pi's preflight; servers ignore it. */
const KEYLESS_PLACEHOLDER = "no-key";

function streamsFor(api: string): ProviderStreams {
  switch (api) {
    case "openai-completions":
      return openAICompletionsApi();
    case "openai-responses":
      return openAIResponsesApi();
    case "anthropic-messages":
      return anthropicMessagesApi();
    case "google-generative-ai":
      return googleGenerativeAIApi();
    default:
      throw new Error(`custom provider api "${api}" is not supported by the turn executor`);
  }
}

export class ModelRuntimePool {
  readonly #config: KernelConfig;
  readonly #native: ReadonlyMap<string, Provider>;
  readonly #runtimes = new Map<string, Promise<ModelRuntime>>();
  /** The runtimes created so far, by the same key: a warm turn takes its runtime without awaiting. */
  readonly #ready = new Map<string, ModelRuntime>();
  /**
   * Catalog models resolved so far, by ref: the pool's config does not change, so a ref names the same model
   * every time, and handing out the same object lets a warm session's shape check compare by identity instead of
   * serialising both models each turn.
   */
  readonly #catalogModels = new Map<string, Model<Api>>();

  constructor(options: ModelRuntimePoolOptions) {
    this.#config = options.config;
    this.#native = new Map((options.nativeProviders ?? []).map((provider) => [provider.id, provider]));
  }

  /** The pi model for a ref: the native provider's own model object, else the config's or pi-ai's catalog. */
  resolveModel(ref: ModelRef): Model<Api> {
    const native = this.#native.get(ref.provider);
    if (native) {
      const model = native.getModels().find((candidate) => candidate.id === ref.model);
      if (!model) throw new Error(`provider "${ref.provider}" has no model "${ref.model}"`);
      return model as Model<Api>;
    }
    const key = `${ref.provider}/${ref.model}`;
    let model = this.#catalogModels.get(key);
    if (!model) {
      // Frozen: one object serves every turn, so no caller may change it under another.
      model = Object.freeze(resolveCatalogModel(this.#config, ref).model);
      this.#catalogModels.set(key, model);
    }
    return model;
  }

  /** A runtime that streams `model` with `credential`; created once per provider, profile and secret. */
  runtimeFor(model: Model<Api>, credential: AttemptCredential): Promise<ModelRuntime> {
    const key = runtimeKey(model, credential);
    let runtime = this.#runtimes.get(key);
    if (!runtime) {
      runtime = this.#create(model, credential);
      // A failed creation is not cached: the next attempt tries again.
      runtime.then(
        (created) => this.#ready.set(key, created),
        () => this.#runtimes.delete(key),
      );
      this.#runtimes.set(key, runtime);
    }
    return runtime;
  }

  /** `runtimeFor`'s runtime when it is created already (the usual case after a first turn), else undefined. */
  readyRuntimeFor(model: Model<Api>, credential: AttemptCredential): ModelRuntime | undefined {
    return this.#ready.get(runtimeKey(model, credential));
  }

  async #create(model: Model<Api>, credential: AttemptCredential): Promise<ModelRuntime> {
    const runtime = await ModelRuntime.create({
      credentials: new InMemoryCredentialStore(),
      modelsPath: null,
      refreshOnCreate: false,
    });
    const providerId = model.provider;
    const native = this.#native.get(providerId);
    const custom = Object.entries(this.#config.models.providers).find(
      ([id]) => id.toLowerCase() === providerId,
    );
    if (native) {
      runtime.registerNativeProvider(native);
    } else if (custom) {
      const [, providerConfig] = custom;
      const secret = credential.secret ?? KEYLESS_PLACEHOLDER;
      const models = providerConfig.models.map(
        (entry) => resolveCatalogModel(this.#config, { provider: providerId, model: entry.id }).model,
      );
      runtime.registerNativeProvider(
        createProvider({
          id: providerId,
          baseUrl: providerConfig.baseUrl,
          // The secret is handed over as data: never interpreted as "$ENV" or "!command" the way a
          // models.json key would be.
          auth: {
            apiKey: { name: `${providerId} key`, resolve: async () => ({ auth: { apiKey: secret } }) },
          },
          models,
          api: streamsFor(providerConfig.api),
        }),
      );
    } else if (credential.secret !== undefined) {
      await runtime.setRuntimeApiKey(providerId, credential.secret);
    }
    // Settle pi's asynchronous auth snapshot so the first prompt sees the provider as configured (§6.2).
    await runtime.refresh({ allowNetwork: false, providers: [providerId] });
    return runtime;
  }
}

/** One runtime per provider, profile and secret. */
function runtimeKey(model: Model<Api>, credential: AttemptCredential): string {
  return `${model.provider}\u0000${credential.profileId ?? ""}\u0000${credential.secret ?? ""}`;
}
