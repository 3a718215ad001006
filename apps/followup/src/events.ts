// The follow-up runner's event fan-out: listeners per event type, each called in isolation. Owns:
// subscription and delivery. Does not own: when events happen (runner.ts) or their shapes (runner-types.ts).
import type { FollowupEvent, FollowupEventType } from "./runner-types.ts";

export class FollowupEmitter {
  readonly #listeners = new Map<FollowupEventType, Set<(event: FollowupEvent) => void>>();

  /** Subscribes to one kind of event; returns the unsubscribe function. */
  on<T extends FollowupEventType>(
    type: T,
    listener: (event: Extract<FollowupEvent, { type: T }>) => void,
  ): () => void {
    let set = this.#listeners.get(type);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    const stored = listener as (event: FollowupEvent) => void;
    set.add(stored);
    return () => set.delete(stored);
  }

  emit(event: FollowupEvent): void {
    for (const listener of this.#listeners.get(event.type) ?? []) {
      try {
        listener(event);
      } catch {
        // A listener's failure must not undo the queue's bookkeeping (or another listener's delivery).
      }
    }
  }
}
