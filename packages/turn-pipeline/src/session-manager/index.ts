// The pi SessionManager adapter over session-store: pi's in-memory manager, every write mirrored into a
// store transcript (see pi-session-manager.ts for the choice and its caveats).
export {
  type BindingTarget,
  DEFAULT_WARM_SESSIONS,
  PiSessionBindingCache,
  type PiSessionBindingCacheOptions,
} from "./binding-cache.ts";
export { holdsContextOnly, latestOnBranch } from "./lazy-history.ts";
export {
  bindPiSessionManager,
  newTranscriptHeader,
  openPiSessionManager,
  type PiSessionBinding,
  type TranscriptOpener,
  thinkingLevelForCreate,
} from "./pi-session-manager.ts";
