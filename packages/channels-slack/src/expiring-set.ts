// A set whose members expire after a fixed time, bounded in size: the endpoint's memory of accepted request
// signatures, event ids and message keys inside Slack's five-minute window. Owns expiry and the bound; does not
// own what the keys mean.

export class ExpiringSet {
  readonly #ttlMs: number;
  readonly #maxSize: number;
  // insertion order is expiry order (one TTL for every key), so pruning reads from the front
  readonly #expiresAt = new Map<string, number>();

  constructor(ttlMs: number, maxSize = 50_000) {
    this.#ttlMs = ttlMs;
    this.#maxSize = maxSize;
  }

  has(key: string, now = Date.now()): boolean {
    const expiresAt = this.#expiresAt.get(key);
    return expiresAt !== undefined && expiresAt > now;
  }

  add(key: string, now = Date.now()): void {
    this.#expiresAt.delete(key);
    this.#expiresAt.set(key, now + this.#ttlMs);
    this.#prune(now);
  }

  get size(): number {
    return this.#expiresAt.size;
  }

  #prune(now: number): void {
    for (const [key, expiresAt] of this.#expiresAt) {
      if (expiresAt > now && this.#expiresAt.size <= this.#maxSize) break;
      this.#expiresAt.delete(key);
    }
  }
}
