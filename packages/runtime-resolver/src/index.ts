// @agent-kernel/runtime-resolver: decides what a run uses (identity, model and
// fallbacks, auth profile, thinking, queue, sandbox) as one frozen
// RuntimeContext, and classifies provider errors into failover reasons and
// recovery plans. It never runs a turn.

/** The environment variable naming the state dir (re-exported from @agent-kernel/config). */
export { STATE_DIR_ENV_VAR } from "@agent-kernel/config";
export {
  type CooldownConfig,
  clearExpiredCooldowns,
  computeNextProfileUsageStats,
  DEFAULT_COOLDOWNS,
  isCooldownBypassedForProvider,
  isModelScopedCooldownReason,
  isProfileInCooldown,
  markProfileUsed,
  type ProfileUsageStats,
  resolveProfileUnusableUntil,
} from "./auth-cooldown.ts";
export {
  AUTH_PROFILES_FILE,
  type AuthCredential,
  type AuthProfile,
  type AuthProfileDescription,
  AuthProfileStore,
  type AuthProfileType,
  describeProfile,
  orderProfiles,
  readAuthProfilesFile,
  redactSecrets,
  secretOf,
} from "./auth-profiles.ts";
export {
  type AuthStateStore,
  fromStored,
  InMemoryAuthStateStore,
  loadProfileUsage,
  recordProfileFailure,
  recordProfileSuccess,
  type StoredProfileStats,
  toStored,
} from "./auth-state.ts";
export {
  type ApiErrorInfo,
  classifyFailover,
  extractLeadingHttpStatus,
  FAILOVER_REASONS,
  type FailoverReason,
  type FailoverSignal,
  failoverStatus,
  isCompactionFailureError,
  isContextOverflowError,
  isLikelyContextOverflowError,
  isModelNotFoundMessage,
  isReasoningConstraintMessage,
  parseApiErrorInfo,
} from "./classify-error.ts";
export {
  isAuthErrorMessage,
  isAuthPermanentErrorMessage,
  isBillingErrorMessage,
  isCloudCodeAssistFormatError,
  isImageDimensionErrorMessage,
  isOverloadedErrorMessage,
  isRateLimitErrorMessage,
  isTimeoutErrorMessage,
} from "./error-predicates.ts";
export {
  deriveSessionKey,
  GROUP_SURFACES,
  type MessageSessionContext,
  normalizeE164,
  resolveGroupSessionKey,
  resolveSessionKey,
  type SessionScope,
} from "./message-session-key.ts";
export {
  type CatalogModel,
  type ContextTokensSource,
  DEFAULT_CUSTOM_MAX_TOKENS,
  type ModelOrigin,
  resolveCatalogModel,
  resolveContextTokens,
} from "./model-catalog.ts";
export {
  type CandidateOrigin,
  isModelAllowed,
  type ModelCandidate,
  type ModelSelection,
  type ModelSource,
  resolveModelAllowlist,
  resolveModelCandidateChain,
  type SessionModelOverride,
  selectModel,
} from "./model-chain.ts";
export {
  buildModelAliasIndex,
  configuredPrimaryRaw,
  DEFAULT_MODEL,
  DEFAULT_PROVIDER,
  hasExactConfiguredProviderModel,
  type ModelAlias,
  type ModelAliasIndex,
  type ModelRef,
  modelKey,
  normalizeModelRef,
  normalizeProviderId,
  parseModelRef,
  type ResolvedModelRef,
  resolveConfiguredPrimary,
  resolveModelRefFromString,
  splitTrailingAuthProfile,
} from "./model-ref.ts";
export {
  DEFAULT_GROUP_HISTORY_LIMIT,
  MAX_PROMPT_HISTORY_LIMIT,
  resolvePromptHistoryLimit,
} from "./prompt-history-limit.ts";
export {
  type MissingCredential,
  missingCredentialMessage,
  providerKeyEnvVars,
} from "./provider-credentials.ts";
export {
  normalizePersistedQueueMode,
  normalizeQueueDropPolicy,
  normalizeQueueMode,
  type QueueConfig,
  type QueueDropPolicy,
  type QueueMode,
  type QueueSettings,
  resolveQueueSettings,
  type SessionQueueSettings,
} from "./queue-settings.ts";
export {
  cooldownScope,
  planRecovery,
  RECOVERY_LIMITS,
  type RecoveryInput,
  type RecoveryPlan,
  type RecoveryStep,
} from "./recovery.ts";
export { type HeaderLookup, retryAfterMs } from "./retry-after.ts";
export {
  type CurrentSessionState,
  type Decision,
  type ResolveRuntimeInput,
  type RuntimeContext,
  type RuntimeRequest,
  resolveRuntime,
} from "./runtime-context.ts";
export {
  resolveSandboxContext,
  type SandboxContext,
  type SandboxMode,
  type SandboxScope,
  type WorkspaceAccess,
} from "./sandbox-context.ts";
export {
  type IdentitySource,
  isSessionStale,
  type PathOptions,
  type ResetConfig,
  resolveSessionId,
  resolveSessionIdentity,
  resolveStateDir,
  type SessionIdentity,
  SessionIdentityError,
  type SessionIdentityInput,
  type SessionIdSource,
} from "./session-identity.ts";
export {
  buildAgentMainSessionKey,
  buildAgentPeerSessionKey,
  buildCronSessionKey,
  buildGroupHistoryKey,
  buildHookSessionKey,
  buildSubagentSessionKey,
  classifySessionKeyShape,
  DEFAULT_ACCOUNT_ID,
  DEFAULT_AGENT_ID,
  DEFAULT_MAIN_KEY,
  type DmScope,
  getSubagentDepth,
  type IdentityLinks,
  isAcpSessionKey,
  isCronRunSessionKey,
  isCronSessionKey,
  isHookSessionKey,
  isSubagentSessionKey,
  isUnscopedSessionKeySentinel,
  isValidAgentId,
  normalizeAccountId,
  normalizeAgentId,
  normalizeMainKey,
  normalizeSessionKey,
  normalizeSessionPeerId,
  type ParsedAgentSessionKey,
  type PeerKind,
  type PeerSessionKeyParams,
  parseAgentSessionKey,
  parseCronRunScopeSuffix,
  parseThreadSessionSuffix,
  resolveAgentIdFromSessionKey,
  resolveLinkedDirectPeerId,
  resolveThreadSessionKeys,
  type SessionKeyShape,
  toAgentRequestSessionKey,
  toAgentStoreSessionKey,
} from "./session-key.ts";
export {
  clampThinkLevel,
  isClearThinkingDirective,
  normalizeThinkLevel,
  pickFallbackThinkingLevel,
  type ResolvedThinking,
  resolveThinking,
  supportedThinkLevels,
  THINK_LEVEL_RANKS,
  THINK_LEVELS,
  type ThinkingSource,
  type ThinkLevel,
} from "./thinking.ts";
