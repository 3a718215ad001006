// Fault injection for the Web API: the faults a test queues with `failNext(method, fault, times)` and which
// call meets which. Owns the queue and the fault shapes; http-front.ts serves them (HTTP 429 + Retry-After,
// a 5xx, or an `{ok:false,error}`).

/** A fault for the next matching call(s). */
export type SlackFault =
  | { readonly kind: "rate-limited"; readonly retryAfterSeconds?: number }
  | { readonly kind: "server-error"; readonly status?: number }
  | { readonly kind: "error"; readonly error: string };

export class FaultQueue {
  readonly #faults: { method: string; fault: SlackFault; remaining: number }[] = [];

  /** Fails the next `times` calls of `method` (or of any method with `*`). */
  add(method: string, fault: SlackFault, times: number): void {
    this.#faults.push({ method, fault, remaining: times });
  }

  /** The fault the next call of `method` meets, counted as used; undefined when none matches. */
  take(method: string): SlackFault | undefined {
    const index = this.#faults.findIndex((f) => f.method === method || f.method === "*");
    const entry = this.#faults[index];
    if (!entry) return undefined;
    entry.remaining--;
    if (entry.remaining <= 0) this.#faults.splice(index, 1);
    return entry.fault;
  }
}
