// Warm pi session-manager bindings, kept between turns. Owns: per store, a bounded least-recently-used set of
// bindings (one per agent, session and cwd), checked out for a turn and handed back after it, and reused only
// when the binding proves it still holds exactly what the store holds (`PiSessionBinding.isInSync`). Does not
// own: opening or mirroring a binding (pi-session-manager.ts) or serialising turns of one session (the
// kernel's lanes).
//
// Why: rebuilding pi's manager reads every entry of the session and re-indexes it in pi, a cost that grows
// with the session and is the same every turn; a warm session's next turn starts from the manager its last
// turn left. Why it is sound: the store's entries are immutable and append-only and the leaf is the only other
// state, so an unchanged entry count and leaf mean an unchanged transcript; a write that failed halfway
// (pi holds an entry the store refused) fails the check too, and the session is reopened from the store.
// A binding is checked out while a turn uses it, so two turns never share one; a concurrent turn of the
// same session opens its own, and whichever is handed back last is verified before its next use.
import {
  latestThinkingLevel,
  openPiSessionManager,
  type PiSessionBinding,
  type TranscriptOpener,
} from "./pi-session-manager.ts";

export interface BindingTarget {
  readonly agentId: string;
  readonly sessionId: string;
  readonly cwd: string;
}

/** Warm sessions kept per store; each holds its transcript's entries (shared with the store's read cache). */
export const DEFAULT_WARM_SESSIONS = 256;

export class PiSessionBindingCache {
  readonly #maxSessions: number;
  readonly #byStore = new WeakMap<TranscriptOpener, Map<string, PiSessionBinding>>();

  constructor(options: { readonly maxSessions?: number } = {}) {
    this.#maxSessions = options.maxSessions ?? DEFAULT_WARM_SESSIONS;
  }

  /** The session's binding for one turn: the warm one when it is still in sync, else a fresh one. */
  acquire(store: TranscriptOpener, target: BindingTarget): PiSessionBinding {
    const warm = this.#byStore.get(store);
    const key = keyOf(target);
    const binding = warm?.get(key);
    if (binding !== undefined) {
      warm?.delete(key);
      // `isNew` and `storedThinkingLevel` describe the transcript as this turn finds it.
      if (binding.isInSync()) {
        return {
          ...binding,
          isNew: binding.transcript.count() === 0,
          storedThinkingLevel: latestThinkingLevel(binding.sessionManager.getBranch()),
        };
      }
    }
    return openPiSessionManager(store, target);
  }

  /** Hands a binding back after its turn; it serves the next turn of its session if still in sync then. */
  release(store: TranscriptOpener, target: BindingTarget, binding: PiSessionBinding): void {
    if (this.#maxSessions <= 0) return;
    let warm = this.#byStore.get(store);
    if (warm === undefined) {
      warm = new Map();
      this.#byStore.set(store, warm);
    }
    const key = keyOf(target);
    warm.delete(key);
    warm.set(key, binding);
    if (warm.size > this.#maxSessions) {
      const oldest = warm.keys().next();
      if (!oldest.done) warm.delete(oldest.value);
    }
  }

  /** Drops every warm binding of a store (e.g. before closing it). */
  forget(store: TranscriptOpener): void {
    this.#byStore.delete(store);
  }
}

function keyOf(target: BindingTarget): string {
  return `${target.agentId}\u0000${target.sessionId}\u0000${target.cwd}`;
}
