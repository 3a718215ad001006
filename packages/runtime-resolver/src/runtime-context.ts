// `resolveRuntime`: every decision about what a run will use, in one frozen
// RuntimeContext the kernel stores on the run, each with where it came from.
// Owns: composing identity, model selection and candidates, the pi-ai model,
// auth-profile order and pin, thinking, context tokens, timeout, queue and
// sandbox. Does not own: any of those rules (their modules) or running a turn.
import { type KernelConfig, resolveAgentConfig } from "@agent-kernel/config";
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ProfileUsageStats } from "./auth-cooldown.ts";
import { type AuthProfileDescription, AuthProfileStore, describeProfile } from "./auth-profiles.ts";
import {
  type ContextTokensSource,
  type ModelOrigin,
  resolveCatalogModel,
  resolveContextTokens,
} from "./model-catalog.ts";
import {
  type ModelCandidate,
  type ModelSource,
  resolveModelCandidateChain,
  type SessionModelOverride,
  selectModel,
} from "./model-chain.ts";
import { modelKey } from "./model-ref.ts";
import {
  type QueueMode,
  type QueueSettings,
  resolveQueueSettings,
  type SessionQueueSettings,
} from "./queue-settings.ts";
import { resolveSandboxContext, type SandboxContext } from "./sandbox-context.ts";
import {
  type IdentitySource,
  type PathOptions,
  resolveSessionId,
  resolveSessionIdentity,
  type SessionIdentityInput,
  type SessionIdSource,
} from "./session-identity.ts";
import { normalizeThinkLevel, resolveThinking, type ThinkingSource, type ThinkLevel } from "./thinking.ts";

/** One decision and where it came from. */
export interface Decision<T, S extends string = string> {
  readonly value: T;
  readonly source: S;
}

/** What the store knows about the session before this run. */
export interface CurrentSessionState {
  readonly sessionId?: string | undefined;
  readonly lastActivityAt?: number | undefined;
  readonly modelOverride?: SessionModelOverride | undefined;
  readonly authProfileOverride?: { readonly profileId: string; readonly source: "user" | "auto" } | undefined;
  readonly thinkingLevel?: string | undefined;
  readonly contextTokens?: number | undefined;
  readonly queue?: SessionQueueSettings | undefined;
}

export interface RuntimeRequest {
  /** A model ref or alias for this run (`--model`, a directive). */
  readonly model?: string | undefined;
  /** A one-shot thinking level (`/think`, `--thinking-once`). */
  readonly thinking?: string | undefined;
  /** Throw instead of downgrading an unsupported thinking level (the CLI's explicit request). */
  readonly thinkingStrict?: boolean | undefined;
  readonly cronPayload?:
    | { readonly primary: string; readonly fallbacks?: readonly string[] | undefined }
    | undefined;
  readonly timeoutSeconds?: number | undefined;
  /** The inbound channel, for per-channel queue settings. */
  readonly channel?: string | undefined;
  readonly queueMode?: QueueMode | undefined;
  /** Start a new sessionId whatever the reset rules say (cron isolated runs, `/new`). */
  readonly forceNewSession?: boolean | undefined;
  /** Run sandboxed whatever the mode. */
  readonly sandboxRequired?: boolean | undefined;
  /** Use this context window instead of the computed one's session fallback (follow-up runs). */
  readonly useSessionContextTokens?: boolean | undefined;
}

export interface ResolveRuntimeInput extends PathOptions {
  readonly config: KernelConfig;
  readonly session: SessionIdentityInput;
  readonly current?: CurrentSessionState | undefined;
  readonly request?: RuntimeRequest | undefined;
  /** Per-profile usage (from `loadProfileUsage`), for cooldown-aware ordering. */
  readonly authUsage?: Readonly<Record<string, ProfileUsageStats>> | undefined;
  readonly now?: number | undefined;
  /** Makes new session ids; default `crypto.randomUUID`. */
  readonly newSessionId?: (() => string) | undefined;
}

export interface RuntimeContext {
  readonly agentId: Decision<string, IdentitySource>;
  readonly sessionKey: Decision<string, "input" | "main">;
  readonly sessionId: Decision<string, SessionIdSource>;
  readonly isMainSession: boolean;
  readonly workspaceDir: Decision<string>;
  readonly agentDir: Decision<string>;
  readonly stateDir: string;
  readonly model: Decision<
    { readonly provider: string; readonly model: string; readonly key: string },
    ModelSource
  >;
  /** The real pi-ai model of the first candidate. */
  readonly piModel: Decision<Model<Api>, ModelOrigin>;
  /** Every model to try in order, the chosen one first. */
  readonly candidates: readonly ModelCandidate[];
  readonly authProfile: {
    /** The profile to start with, or undefined when the provider has none (env or inline keys). */
    readonly pinned:
      | Decision<string, "model-ref" | "session-override:user" | "session-override:auto" | "order">
      | undefined;
    readonly order: readonly string[];
    /** The profiles of the model's provider, without secrets. */
    readonly profiles: readonly AuthProfileDescription[];
  };
  readonly thinking: Decision<ThinkLevel, ThinkingSource> & {
    readonly requested: ThinkLevel;
    readonly downgradedFrom?: ThinkLevel;
  };
  readonly contextTokens: Decision<number, ContextTokensSource>;
  readonly timeoutMs: Decision<number, "request" | "agent">;
  readonly queue: QueueSettings;
  readonly sandbox: SandboxContext;
  readonly notes: readonly string[];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/**
 * Resolves everything a run needs to know before it starts. Throws a clear
 * error for an unknown agent, a key of another agent, an unknown or
 * non-allowlisted requested model, or an explicitly requested thinking level
 * the model cannot do (`thinkingStrict`).
 */
export function resolveRuntime(input: ResolveRuntimeInput): RuntimeContext {
  const { config } = input;
  const now = input.now ?? Date.now();
  const request = input.request ?? {};
  const current = input.current ?? {};
  const notes: string[] = [];
  const identity = resolveSessionIdentity(config, input.session, input);
  const agent = resolveAgentConfig(config, identity.agentId);
  if (!agent) throw new Error(`agent "${identity.agentId}" has no configuration`);

  const sessionId = resolveSessionId({
    requested: input.session.sessionId,
    current:
      current.sessionId !== undefined
        ? { sessionId: current.sessionId, lastActivityAt: current.lastActivityAt ?? now }
        : undefined,
    reset: config.session.reset,
    now,
    forceNew: request.forceNewSession,
    newId: input.newSessionId ?? (() => crypto.randomUUID()),
  });
  const sessionIsNew = sessionId.source !== "current" && sessionId.source !== "input";
  // A reset drops an automatic model override; a user pin survives it (OpenClaw keeps user pins across /new).
  const modelOverride =
    sessionIsNew && current.modelOverride?.source === "auto" ? undefined : current.modelOverride;

  const selection = selectModel({
    config,
    agentId: identity.agentId,
    requested: request.model,
    cronPayload: request.cronPayload,
    sessionOverride: modelOverride,
  });
  notes.push(...selection.notes);
  const candidates = resolveModelCandidateChain({
    config,
    agentId: identity.agentId,
    provider: selection.ref.provider,
    model: selection.ref.model,
    fallbacksOverride: selection.fallbacksOverride,
  });
  const first = candidates[0] ?? { ...selection.ref, origin: "requested" as const };
  const catalog = resolveCatalogModel(config, first);

  const store = AuthProfileStore.load(config, identity.agentDir);
  const provider = catalog.model.provider;
  const sessionPin =
    current.authProfileOverride &&
    !(sessionIsNew && current.authProfileOverride.source === "auto") &&
    store.isEligible(current.authProfileOverride.profileId, provider)
      ? current.authProfileOverride
      : undefined;
  if (current.authProfileOverride && !sessionPin) {
    notes.push(
      `session auth profile "${current.authProfileOverride.profileId}" does not apply to provider "${provider}"`,
    );
  }
  const refProfile =
    selection.authProfile !== undefined && store.isEligible(selection.authProfile, provider)
      ? selection.authProfile
      : undefined;
  if (selection.authProfile !== undefined && refProfile === undefined) {
    throw new Error(
      `auth profile "${selection.authProfile}" from the model ref is unknown or has no credential for provider "${provider}"`,
    );
  }
  const order = store.resolveOrder({
    provider,
    usage: input.authUsage ?? {},
    now,
    forModel: catalog.model.id,
    preferredProfile: refProfile ?? sessionPin?.profileId,
  });
  const pinnedId = order[0];
  const pinned =
    pinnedId === undefined
      ? undefined
      : refProfile !== undefined
        ? { value: refProfile, source: "model-ref" as const }
        : sessionPin && pinnedId === sessionPin.profileId
          ? { value: pinnedId, source: `session-override:${sessionPin.source}` as const }
          : { value: pinnedId, source: "order" as const };

  const sessionThinking = normalizeThinkLevel(current.thinkingLevel);
  const thinking = resolveThinking({
    model: catalog.model,
    message: normalizeThinkLevel(request.thinking),
    session: sessionThinking,
    agent: config.agents.list.find((entry) => entry.id === identity.agentId)?.thinkingDefault,
    defaults: config.agents.defaults.thinkingDefault,
    strict: request.thinkingStrict,
  });
  if (thinking.downgradedFrom) {
    notes.push(
      `thinking "${thinking.downgradedFrom}" is not supported by ${modelKey(provider, catalog.model.id)}; using "${thinking.level}"`,
    );
  }
  if (request.thinking !== undefined && normalizeThinkLevel(request.thinking) === undefined) {
    throw new Error(
      `unknown thinking level "${request.thinking}" (expected off, minimal, low, medium, high, xhigh, adaptive, max or ultra)`,
    );
  }

  const contextTokens = resolveContextTokens({
    agentContextTokens: agent.contextTokens,
    model: catalog.model,
    sessionContextTokens: request.useSessionContextTokens ? current.contextTokens : undefined,
  });
  const timeoutSeconds = request.timeoutSeconds ?? agent.timeoutSeconds;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 0) {
    throw new Error(`invalid timeout ${timeoutSeconds} s: expected a whole number of seconds (0 = none)`);
  }

  const context: RuntimeContext = {
    agentId: { value: identity.agentId, source: identity.agentIdSource },
    sessionKey: { value: identity.sessionKey, source: identity.sessionKeySource },
    sessionId: { value: sessionId.sessionId, source: sessionId.source },
    isMainSession: identity.isMainSession,
    workspaceDir: { value: identity.workspaceDir, source: identity.workspaceDirSource },
    agentDir: { value: identity.agentDir, source: identity.agentDirSource },
    stateDir: identity.stateDir,
    model: {
      value: { provider: first.provider, model: first.model, key: modelKey(first.provider, first.model) },
      source: selection.source,
    },
    piModel: { value: catalog.model, source: catalog.origin },
    candidates,
    authProfile: {
      pinned,
      order,
      profiles: order.flatMap((id) => {
        const profile = store.get(id);
        return profile ? [describeProfile(profile)] : [];
      }),
    },
    thinking: {
      value: thinking.level,
      source: thinking.source,
      requested: thinking.requested,
      ...(thinking.downgradedFrom ? { downgradedFrom: thinking.downgradedFrom } : {}),
    },
    contextTokens: { value: contextTokens.value, source: contextTokens.source },
    timeoutMs: {
      value: timeoutSeconds * 1000,
      source: request.timeoutSeconds !== undefined ? "request" : "agent",
    },
    queue: resolveQueueSettings({
      queue: config.messages.queue,
      channel: request.channel,
      session: current.queue,
      inlineMode: request.queueMode,
    }),
    sandbox: resolveSandboxContext({
      agent,
      sessionKey: identity.sessionKey,
      mainKey: config.session.mainKey,
      globalScope: config.session.scope === "global",
      required: request.sandboxRequired,
      agentWorkspace: identity.workspaceDir,
      stateDir: identity.stateDir,
    }),
    notes,
  };
  return deepFreeze(context);
}
