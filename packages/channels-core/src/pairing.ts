// DM pairing: an unknown sender under `dmPolicy: "pairing"` gets a short code; the owner approves it and the
// sender is allowed from then on. Owns: code generation (8 characters of an unambiguous alphabet, from
// crypto), the pending requests (expiry, at most N per channel account, one code per sender), approvals, and
// the lockout that stops approval codes from being guessed. Persisted in `store.channelState` under keys
// `pairing:pending` (all pending requests of one channel account, written with compare-and-set),
// `pairing:allow:<senderId>` (one per approved sender) and `pairing:guard` (failed approval attempts). Does
// not own: deciding who needs pairing (access.ts) or the messages that carry codes (apps).
//
// OpenClaw 2026.9.6 (`src/pairing/pairing-store.ts`) is the model: same alphabet, length, 1 h lifetime
// counted from creation, 3 pending per account, and a full account gets no code. Deviation: OpenClaw has no
// limit on wrong approval codes (approval is a local CLI); here approvals may come through a chat command,
// so wrong codes are counted and lock approvals for a while.
import { randomInt } from "node:crypto";
import type { ChannelStateApi, ChannelStateEntry } from "@agent-kernel/session-store";

/** The characters pairing codes are drawn from: no 0/O or 1/I, which read alike. */
export const PAIRING_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
/** How many characters a pairing code has. */
export const PAIRING_CODE_LENGTH = 8;

/** Pairing's limits when `PairingOptions` leaves them out: code lifetime, pending requests, lockout. */
export const PAIRING_DEFAULTS = {
  /** A code lives this long from its creation (OpenClaw: 1 h). */
  ttlMs: 60 * 60 * 1000,
  /** Pending requests per channel account (OpenClaw: 3). */
  maxPending: 3,
  /** Wrong approval codes allowed inside `failureWindowMs` before approvals lock. */
  maxFailedAttempts: 5,
  failureWindowMs: 15 * 60 * 1000,
  /** How long approvals stay locked after too many wrong codes (even the right code is refused). */
  lockoutMs: 15 * 60 * 1000,
} as const;

/** Overrides of `PAIRING_DEFAULTS` for a `PairingStore`, with the clock and code generator tests inject. */
export interface PairingOptions {
  readonly ttlMs?: number;
  readonly maxPending?: number;
  readonly maxFailedAttempts?: number;
  readonly failureWindowMs?: number;
  readonly lockoutMs?: number;
  /** The clock (tests inject one). */
  readonly now?: () => number;
  /** Code source (tests may inject one); default: crypto.randomInt over the alphabet. */
  readonly generateCode?: () => string;
}

/** A pending pairing request: the sender, the code handed to them and when it expires. */
export interface PairingRequest {
  readonly senderId: string;
  readonly code: string;
  readonly createdAt: number;
  readonly lastSeenAt: number;
  readonly expiresAt: number;
  readonly username?: string;
  readonly displayName?: string;
}

/** A sender approved through pairing, and when. */
export interface PairingApproval {
  readonly senderId: string;
  readonly approvedAt: number;
  readonly username?: string;
  readonly displayName?: string;
}

/** What `PairingStore.challenge` answers: a new or existing code for the sender, or none while too many are pending. */
export type PairingChallenge =
  | { readonly status: "created" | "existing"; readonly code: string; readonly expiresAt: number }
  /** The account already has `maxPending` other pending requests: no code is handed out. */
  | { readonly status: "too-many-pending" };

/** What `PairingStore.approvePairing` answers: approved, a wrong code (with attempts left), or locked. */
export type PairingApprovalResult =
  | { readonly status: "approved"; readonly approval: PairingApproval }
  | { readonly status: "invalid-code"; readonly attemptsLeft: number }
  | { readonly status: "locked"; readonly retryAfterMs: number };

interface GuardState {
  readonly failures: number;
  readonly windowStart: number;
  readonly lockedUntil?: number;
}

const PENDING_KEY = "pairing:pending";
const GUARD_KEY = "pairing:guard";
const ALLOW_PREFIX = "pairing:allow:";
/** Compare-and-set retries before giving up on a contended pairing row. */
const CAS_ATTEMPTS = 8;

/** A code of `PAIRING_CODE_LENGTH` characters drawn uniformly from the alphabet with crypto.randomInt. */
export function generatePairingCode(): string {
  let code = "";
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++) {
    code += PAIRING_CODE_ALPHABET[randomInt(0, PAIRING_CODE_ALPHABET.length)];
  }
  return code;
}

/** Upper-cases and drops spaces and dashes, so `abcd-efgh` matches `ABCDEFGH`. */
export function normalizePairingCode(code: string): string {
  return code.replace(/[\s-]+/g, "").toUpperCase();
}

/** DM pairing kept in the session store's channel state: codes for unknown senders, the owner's approvals, lockout after wrong codes. */
export class PairingStore {
  readonly #state: ChannelStateApi;
  readonly #ttlMs: number;
  readonly #maxPending: number;
  readonly #maxFailedAttempts: number;
  readonly #failureWindowMs: number;
  readonly #lockoutMs: number;
  readonly #now: () => number;
  readonly #generateCode: () => string;

  constructor(state: ChannelStateApi, options: PairingOptions = {}) {
    this.#state = state;
    this.#ttlMs = positive("ttlMs", options.ttlMs ?? PAIRING_DEFAULTS.ttlMs);
    this.#maxPending = positive("maxPending", options.maxPending ?? PAIRING_DEFAULTS.maxPending);
    this.#maxFailedAttempts = positive(
      "maxFailedAttempts",
      options.maxFailedAttempts ?? PAIRING_DEFAULTS.maxFailedAttempts,
    );
    this.#failureWindowMs = positive(
      "failureWindowMs",
      options.failureWindowMs ?? PAIRING_DEFAULTS.failureWindowMs,
    );
    this.#lockoutMs = positive("lockoutMs", options.lockoutMs ?? PAIRING_DEFAULTS.lockoutMs);
    this.#now = options.now ?? Date.now;
    this.#generateCode = options.generateCode ?? generatePairingCode;
  }

  /** True when the sender was approved by pairing on this channel account. */
  async isPaired(channel: string, accountId: string, senderId: string): Promise<boolean> {
    return (
      (await this.#state.get(channel, accountId, allowKey(senderId), { now: this.#now() })) !== undefined
    );
  }

  /** The ids of every approved sender of the channel account (for `AccessState.pairedSenders`). */
  async pairedSenders(channel: string, accountId: string): Promise<Set<string>> {
    const entries = await this.#state.list(channel, accountId, { prefix: ALLOW_PREFIX, now: this.#now() });
    return new Set(entries.map((entry) => entry.key.slice(ALLOW_PREFIX.length)));
  }

  async listApproved(channel: string, accountId: string): Promise<PairingApproval[]> {
    const entries = await this.#state.list(channel, accountId, { prefix: ALLOW_PREFIX, now: this.#now() });
    return entries.map((entry) => entry.value as PairingApproval);
  }

  /** Removes an approval; true when there was one. */
  async revoke(channel: string, accountId: string, senderId: string): Promise<boolean> {
    return this.#state.delete(channel, accountId, allowKey(senderId));
  }

  /** The live pending requests, oldest first. */
  async listPending(channel: string, accountId: string): Promise<PairingRequest[]> {
    const now = this.#now();
    const entry = await this.#state.get(channel, accountId, PENDING_KEY, { now });
    return liveRequests(entry, now);
  }

  /**
   * The code for a sender who needs pairing: the sender's pending code when there is one (its lifetime is
   * not extended), else a new one — unless the account already has `maxPending` pending requests.
   */
  async challenge(
    channel: string,
    accountId: string,
    sender: { readonly id: string; readonly username?: string; readonly displayName?: string },
  ): Promise<PairingChallenge> {
    return this.#casLoop<PairingChallenge>(channel, accountId, PENDING_KEY, async (entry, now) => {
      const requests = liveRequests(entry, now);
      const existing = requests.find((request) => request.senderId === sender.id);
      if (existing !== undefined) {
        const touched = requests.map((r) => (r === existing ? { ...r, lastSeenAt: now } : r));
        return {
          write: touched,
          result: { status: "existing", code: existing.code, expiresAt: existing.expiresAt } as const,
        };
      }
      if (requests.length >= this.#maxPending) {
        return { write: requests, result: { status: "too-many-pending" } as const };
      }
      const taken = new Set(requests.map((request) => request.code));
      let code = this.#generateCode();
      for (let attempt = 0; taken.has(code) && attempt < 100; attempt++) code = this.#generateCode();
      if (taken.has(code)) throw new Error("pairing: could not generate a unique code");
      const request: PairingRequest = {
        senderId: sender.id,
        code,
        createdAt: now,
        lastSeenAt: now,
        expiresAt: now + this.#ttlMs,
        ...(sender.username === undefined ? {} : { username: sender.username }),
        ...(sender.displayName === undefined ? {} : { displayName: sender.displayName }),
      };
      return {
        write: [...requests, request],
        result: { status: "created", code, expiresAt: request.expiresAt } as const,
      };
    });
  }

  /**
   * The owner approves a code. A wrong code counts against the account's guard: after `maxFailedAttempts`
   * wrong codes inside `failureWindowMs`, every approval (even with the right code) is refused for
   * `lockoutMs`. Codes are compared in constant time per candidate.
   */
  async approvePairing(channel: string, accountId: string, code: string): Promise<PairingApprovalResult> {
    const locked = await this.#lockedFor(channel, accountId);
    if (locked > 0) return { status: "locked", retryAfterMs: locked };
    const wanted = normalizePairingCode(code);
    const claimed = await this.#casLoop(channel, accountId, PENDING_KEY, async (entry, now) => {
      const requests = liveRequests(entry, now);
      const match = requests.find((request) => sameCode(request.code, wanted));
      return match === undefined
        ? { write: undefined, result: undefined }
        : { write: requests.filter((r) => r !== match), result: match };
    });
    if (claimed === undefined) return this.#recordFailure(channel, accountId);
    const now = this.#now();
    const approval: PairingApproval = {
      senderId: claimed.senderId,
      approvedAt: now,
      ...(claimed.username === undefined ? {} : { username: claimed.username }),
      ...(claimed.displayName === undefined ? {} : { displayName: claimed.displayName }),
    };
    await this.#state.put(channel, accountId, allowKey(claimed.senderId), approval, { now });
    return { status: "approved", approval };
  }

  /**
   * The owner refuses a pending request: it is dropped (the sender gets a new code if they write again).
   * Returns the dropped request, or undefined when no live request has that code. A wrong code does not
   * count against the approval guard: denying grants nothing.
   */
  async denyPairing(channel: string, accountId: string, code: string): Promise<PairingRequest | undefined> {
    const wanted = normalizePairingCode(code);
    return this.#casLoop<PairingRequest | undefined>(channel, accountId, PENDING_KEY, async (entry, now) => {
      const requests = liveRequests(entry, now);
      const match = requests.find((request) => sameCode(request.code, wanted));
      return match === undefined
        ? { write: undefined, result: undefined }
        : { write: requests.filter((r) => r !== match), result: match };
    });
  }

  /** Milliseconds approvals stay locked for this account (0 when not locked). */
  async lockedFor(channel: string, accountId: string): Promise<number> {
    return this.#lockedFor(channel, accountId);
  }

  async #lockedFor(channel: string, accountId: string): Promise<number> {
    const now = this.#now();
    const guard = (await this.#state.get(channel, accountId, GUARD_KEY, { now }))?.value as
      | GuardState
      | undefined;
    const until = guard?.lockedUntil ?? 0;
    return until > now ? until - now : 0;
  }

  async #recordFailure(channel: string, accountId: string): Promise<PairingApprovalResult> {
    return this.#casLoop<PairingApprovalResult>(channel, accountId, GUARD_KEY, async (entry, now) => {
      const current = entry?.value as GuardState | undefined;
      if (current?.lockedUntil !== undefined && current.lockedUntil > now) {
        return {
          write: undefined,
          result: { status: "locked", retryAfterMs: current.lockedUntil - now } as const,
        };
      }
      const fresh =
        current === undefined ||
        now - current.windowStart >= this.#failureWindowMs ||
        current.lockedUntil !== undefined;
      const failures = (fresh ? 0 : current.failures) + 1;
      const windowStart = fresh ? now : current.windowStart;
      if (failures >= this.#maxFailedAttempts) {
        const lockedUntil = now + this.#lockoutMs;
        return {
          write: { failures, windowStart, lockedUntil },
          result: { status: "invalid-code", attemptsLeft: 0 } as const,
        };
      }
      return {
        write: { failures, windowStart },
        result: { status: "invalid-code", attemptsLeft: this.#maxFailedAttempts - failures } as const,
      };
    });
  }

  /**
   * Read-modify-write of one row with compare-and-set, retried on a concurrent change. `write: undefined`
   * leaves the row as it is.
   */
  async #casLoop<R>(
    channel: string,
    accountId: string,
    key: string,
    step: (entry: ChannelStateEntry | undefined, now: number) => Promise<{ write: unknown; result: R }>,
  ): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      const now = this.#now();
      const entry = await this.#state.get(channel, accountId, key, { now });
      const { write, result } = await step(entry, now);
      if (write === undefined) return result;
      try {
        await this.#state.put(channel, accountId, key, write, {
          now,
          expectedVersion: entry?.version ?? 0,
          ...(key === PENDING_KEY ? pendingExpiry(write as readonly PairingRequest[]) : {}),
        });
        return result;
      } catch (error) {
        if (attempt >= CAS_ATTEMPTS || !isConflict(error)) throw error;
      }
    }
  }
}

/** By name: channels-core imports only the store's types, so loading it never loads SQLite. */
function isConflict(error: unknown): boolean {
  return error instanceof Error && error.name === "SessionConflictError";
}

function positive(name: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`pairing: ${name} must be a positive number, got ${String(value)}`);
  }
  return value;
}

function allowKey(senderId: string): string {
  if (senderId === "") throw new RangeError("pairing: sender id must not be empty");
  return `${ALLOW_PREFIX}${senderId}`;
}

/** The pending row expires with its last request, so an idle account's row disappears by itself. */
function pendingExpiry(requests: readonly PairingRequest[]): { expiresAt?: number } {
  if (requests.length === 0) return { expiresAt: 0 };
  return { expiresAt: Math.max(...requests.map((r) => r.expiresAt)) };
}

function liveRequests(entry: ChannelStateEntry | undefined, now: number): PairingRequest[] {
  const value = entry?.value;
  if (!Array.isArray(value)) return [];
  return (value as PairingRequest[]).filter((request) => request.expiresAt > now);
}

/** Constant-time comparison of two codes of the same length (different lengths never match). */
function sameCode(stored: string, candidate: string): boolean {
  if (stored.length !== candidate.length) return false;
  let diff = 0;
  for (let i = 0; i < stored.length; i++) diff |= stored.charCodeAt(i) ^ candidate.charCodeAt(i);
  return diff === 0;
}
