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

export interface PiSessionBindingCacheOptions {
  readonly maxSessions?: number;
  /**
   * Called for a binding that leaves the cache without serving another turn: evicted, replaced by a newer
   * binding of its session, found out of sync, or forgotten. What its owner kept beside it can go.
   */
  readonly onDrop?: (binding: PiSessionBinding) => void;
}

export class PiSessionBindingCache {
  readonly #maxSessions: number;
  readonly #onDrop: ((binding: PiSessionBinding) => void) | undefined;
  readonly #byStore = new WeakMap<TranscriptOpener, Map<string, PiSessionBinding>>();

  constructor(options: PiSessionBindingCacheOptions = {}) {
    this.#maxSessions = options.maxSessions ?? DEFAULT_WARM_SESSIONS;
    this.#onDrop = options.onDrop;
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
          // In sync: the store holds exactly the binding's entries, no need to count them again.
          isNew: binding.storedCount() === 0,
          storedThinkingLevel: latestThinkingLevel(binding.sessionManager),
        };
      }
      this.#onDrop?.(binding);
    }
    return openPiSessionManager(store, target);
  }

  /** Hands a binding back after its turn; it serves the next turn of its session if still in sync then. */
  release(store: TranscriptOpener, target: BindingTarget, binding: PiSessionBinding): void {
    if (this.#maxSessions <= 0) {
      this.#onDrop?.(binding);
      return;
    }
    let warm = this.#byStore.get(store);
    if (warm === undefined) {
      warm = new Map();
      this.#byStore.set(store, warm);
    }
    const key = keyOf(target);
    const replaced = warm.get(key);
    warm.delete(key);
    warm.set(key, binding);
    if (replaced !== undefined && replaced.sessionManager !== binding.sessionManager)
      this.#onDrop?.(replaced);
    if (warm.size > this.#maxSessions) {
      const oldest = warm.entries().next();
      if (!oldest.done) {
        warm.delete(oldest.value[0]);
        this.#onDrop?.(oldest.value[1]);
      }
    }
  }

  /** Drops every warm binding of a store (e.g. before closing it). */
  forget(store: TranscriptOpener): void {
    const warm = this.#byStore.get(store);
    this.#byStore.delete(store);
    if (warm !== undefined && this.#onDrop !== undefined)
      for (const binding of warm.values()) this.#onDrop(binding);
  }
}

function keyOf(target: BindingTarget): string {
  return `${target.agentId}\u0000${target.sessionId}\u0000${target.cwd}`;
}
