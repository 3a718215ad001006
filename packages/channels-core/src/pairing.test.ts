// The pairing flow on a real SQLite store: codes, reuse, expiry, the pending cap, approval, persistence
// across a reopen, and the lockout that makes guessing codes hopeless.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { afterEach, describe, expect, it } from "vitest";
import {
  generatePairingCode,
  normalizePairingCode,
  PAIRING_CODE_ALPHABET,
  PAIRING_CODE_LENGTH,
  PAIRING_DEFAULTS,
  PairingStore,
} from "./pairing.ts";

const dirs: string[] = [];
const stores: SqliteSessionStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function open(dir?: string): Promise<{ store: SqliteSessionStore; dir: string }> {
  const stateDir = dir ?? mkdtempSync(join(tmpdir(), "channels-pairing-"));
  if (dir === undefined) dirs.push(stateDir);
  const store = await openSessionStore({ stateDir });
  stores.push(store);
  return { store, dir: stateDir };
}

class Clock {
  now = 1_000_000;
  readonly read = () => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

const HOUR = 60 * 60 * 1000;

describe("pairing codes", () => {
  it("are 8 characters of the unambiguous alphabet (no 0/O/1/I)", () => {
    expect(PAIRING_CODE_ALPHABET).not.toMatch(/[01OI]/);
    const codes = new Set(Array.from({ length: 200 }, generatePairingCode));
    for (const code of codes) {
      expect(code).toHaveLength(PAIRING_CODE_LENGTH);
      expect([...code].every((c) => PAIRING_CODE_ALPHABET.includes(c))).toBe(true);
    }
    expect(codes.size).toBe(200);
    expect(normalizePairingCode(" abcd-efgh ")).toBe("ABCDEFGH");
  });
});

describe("PairingStore", () => {
  it("gives an unknown sender a code, reuses it on repeat requests, and approving it allows the sender", async () => {
    const { store, dir } = await open();
    const clock = new Clock();
    const pairing = new PairingStore(store.channelState, { now: clock.read });
    const first = await pairing.challenge("telegram", "default", { id: "42", username: "alice" });
    expect(first).toMatchObject({ status: "created", expiresAt: clock.now + HOUR });
    clock.advance(10 * 60 * 1000);
    const again = await pairing.challenge("telegram", "default", { id: "42" });
    expect(again).toEqual({ ...first, status: "existing" });
    expect(await pairing.isPaired("telegram", "default", "42")).toBe(false);
    if (first.status !== "created") throw new Error("expected a code");
    const approved = await pairing.approvePairing("telegram", "default", first.code.toLowerCase());
    expect(approved).toMatchObject({ status: "approved", approval: { senderId: "42", username: "alice" } });
    expect(await pairing.isPaired("telegram", "default", "42")).toBe(true);
    expect(await pairing.listPending("telegram", "default")).toEqual([]);
    // the code is spent
    expect((await pairing.approvePairing("telegram", "default", first.code)).status).toBe("invalid-code");
    // other accounts and channels are separate
    expect(await pairing.isPaired("telegram", "other", "42")).toBe(false);
    expect(await pairing.isPaired("slack", "default", "42")).toBe(false);
    // approvals survive a restart
    await store.close();
    const reopened = await open(dir);
    const after = new PairingStore(reopened.store.channelState, { now: clock.read });
    expect(await after.pairedSenders("telegram", "default")).toEqual(new Set(["42"]));
    expect(await after.revoke("telegram", "default", "42")).toBe(true);
    expect(await after.isPaired("telegram", "default", "42")).toBe(false);
  });

  it("codes expire after the TTL (default 1 h from creation, not extended by repeats)", async () => {
    const { store } = await open();
    const clock = new Clock();
    const pairing = new PairingStore(store.channelState, { now: clock.read });
    const first = await pairing.challenge("telegram", "default", { id: "42" });
    if (first.status === "too-many-pending") throw new Error("expected a code");
    clock.advance(HOUR - 1);
    expect((await pairing.challenge("telegram", "default", { id: "42" })).status).toBe("existing");
    clock.advance(1);
    expect(await pairing.listPending("telegram", "default")).toEqual([]);
    expect((await pairing.approvePairing("telegram", "default", first.code)).status).toBe("invalid-code");
    expect(await pairing.isPaired("telegram", "default", "42")).toBe(false);
    const fresh = await pairing.challenge("telegram", "default", { id: "42" });
    expect(fresh.status).toBe("created");
  });

  it("the TTL is configurable", async () => {
    const { store } = await open();
    const clock = new Clock();
    const pairing = new PairingStore(store.channelState, { now: clock.read, ttlMs: 5000 });
    const challenge = await pairing.challenge("slack", "T1", { id: "U1" });
    if (challenge.status === "too-many-pending") throw new Error("expected a code");
    clock.advance(5000);
    expect((await pairing.approvePairing("slack", "T1", challenge.code)).status).toBe("invalid-code");
    expect(() => new PairingStore(store.channelState, { ttlMs: 0 })).toThrow(
      /ttlMs must be a positive number/,
    );
  });

  it("keeps at most maxPending (3) pending requests per channel account; a full account hands out no code", async () => {
    const { store } = await open();
    const clock = new Clock();
    const pairing = new PairingStore(store.channelState, { now: clock.read });
    for (const id of ["1", "2", "3"]) {
      expect((await pairing.challenge("telegram", "default", { id })).status).toBe("created");
      clock.advance(1000);
    }
    expect(await pairing.challenge("telegram", "default", { id: "4" })).toEqual({
      status: "too-many-pending",
    });
    expect((await pairing.challenge("telegram", "default", { id: "2" })).status).toBe("existing");
    expect((await pairing.challenge("telegram", "second-bot", { id: "4" })).status).toBe("created");
    const pending = await pairing.listPending("telegram", "default");
    expect(pending.map((r) => r.senderId)).toEqual(["1", "2", "3"]);
    expect(new Set(pending.map((r) => r.code)).size).toBe(3);
    // once the oldest expires there is room again
    clock.advance(HOUR - 2500);
    expect((await pairing.challenge("telegram", "default", { id: "4" })).status).toBe("created");
  });

  it("concurrent challenges from different senders never exceed the cap", async () => {
    const { store } = await open();
    const pairing = new PairingStore(store.channelState, { maxPending: 2 });
    const results = await Promise.all(
      ["a", "b", "c", "d", "e"].map((id) => pairing.challenge("telegram", "default", { id })),
    );
    expect(results.filter((r) => r.status === "created")).toHaveLength(2);
    expect(await pairing.listPending("telegram", "default")).toHaveLength(2);
  });

  it("the owner denies a pending request by its code: dropped, not approved, the sender gets a new code next time; a wrong code counts nothing", async () => {
    const { store } = await open();
    const clock = new Clock();
    const pairing = new PairingStore(store.channelState, { now: clock.read });
    const alice = await pairing.challenge("telegram", "default", { id: "42", username: "alice" });
    const bob = await pairing.challenge("telegram", "default", { id: "43" });
    if (alice.status !== "created" || bob.status !== "created") throw new Error("expected codes");
    const wrong = [alice.code, bob.code].includes("AAAAAAAA") ? "BBBBBBBB" : "AAAAAAAA";
    for (let i = 0; i < PAIRING_DEFAULTS.maxFailedAttempts + 2; i++)
      expect(await pairing.denyPairing("telegram", "default", wrong)).toBeUndefined();
    // denying with wrong codes did not lock approvals
    expect(await pairing.lockedFor("telegram", "default")).toBe(0);
    const denied = await pairing.denyPairing("telegram", "default", ` ${alice.code.toLowerCase()} `);
    expect(denied).toMatchObject({ senderId: "42", username: "alice", code: alice.code });
    expect((await pairing.listPending("telegram", "default")).map((request) => request.senderId)).toEqual([
      "43",
    ]);
    expect(await pairing.isPaired("telegram", "default", "42")).toBe(false);
    expect((await pairing.approvePairing("telegram", "default", alice.code)).status).toBe("invalid-code");
    const again = await pairing.challenge("telegram", "default", { id: "42" });
    expect(again.status).toBe("created");
    // another account's request is not reachable by this account's deny
    const other = await pairing.challenge("telegram", "other", { id: "44" });
    if (other.status !== "created") throw new Error("expected a code");
    expect(await pairing.denyPairing("telegram", "default", other.code)).toBeUndefined();
    expect(await pairing.listPending("telegram", "other")).toHaveLength(1);
  });

  it("locks approvals after too many wrong codes: even the right code is refused until the lockout ends", async () => {
    const { store } = await open();
    const clock = new Clock();
    const pairing = new PairingStore(store.channelState, { now: clock.read });
    const challenge = await pairing.challenge("telegram", "default", { id: "42" });
    if (challenge.status === "too-many-pending") throw new Error("expected a code");
    const wrong = challenge.code === "AAAAAAAA" ? "BBBBBBBB" : "AAAAAAAA";
    for (let left = PAIRING_DEFAULTS.maxFailedAttempts - 1; left >= 0; left--) {
      expect(await pairing.approvePairing("telegram", "default", wrong)).toEqual({
        status: "invalid-code",
        attemptsLeft: left,
      });
    }
    expect(await pairing.approvePairing("telegram", "default", challenge.code)).toEqual({
      status: "locked",
      retryAfterMs: PAIRING_DEFAULTS.lockoutMs,
    });
    expect(await pairing.isPaired("telegram", "default", "42")).toBe(false);
    clock.advance(PAIRING_DEFAULTS.lockoutMs - 1);
    expect((await pairing.approvePairing("telegram", "default", challenge.code)).status).toBe("locked");
    clock.advance(1);
    // the request itself is still pending (15 min < 1 h) and now approves
    expect((await pairing.approvePairing("telegram", "default", challenge.code)).status).toBe("approved");
  });

  it("wrong codes spread out beyond the failure window do not add up to a lockout", async () => {
    const { store } = await open();
    const clock = new Clock();
    const pairing = new PairingStore(store.channelState, { now: clock.read, maxFailedAttempts: 3 });
    for (let i = 0; i < 10; i++) {
      expect((await pairing.approvePairing("telegram", "default", "ZZZZZZZZ")).status).toBe("invalid-code");
      clock.advance(PAIRING_DEFAULTS.failureWindowMs / 2);
      expect((await pairing.approvePairing("telegram", "default", "ZZZZZZZZ")).status).toBe("invalid-code");
      clock.advance(PAIRING_DEFAULTS.failureWindowMs);
    }
    expect(await pairing.lockedFor("telegram", "default")).toBe(0);
  });

  it("cannot be brute-forced: an attacker guessing as fast as possible for a code's whole life gets ~25 checked guesses", async () => {
    const { store } = await open();
    const clock = new Clock();
    const pairing = new PairingStore(store.channelState, { now: clock.read });
    const pending = [];
    for (const id of ["1", "2", "3"]) pending.push(await pairing.challenge("telegram", "default", { id }));
    const codes = new Set(pending.flatMap((c) => (c.status === "too-many-pending" ? [] : [c.code])));
    expect(codes.size).toBe(3);
    // Guess sequentially through the alphabet, one guess per second, for the codes' whole hour.
    let checked = 0;
    let hits = 0;
    const start = clock.now;
    for (let guess = 0; clock.now - start < HOUR; guess++, clock.advance(1000)) {
      const candidate = guess
        .toString(32)
        .padStart(8, "0")
        .replace(/./g, (d) => PAIRING_CODE_ALPHABET[parseInt(d, 32)] ?? "A");
      const result = await pairing.approvePairing("telegram", "default", candidate);
      if (result.status !== "locked") checked++;
      if (result.status === "approved") hits++;
    }
    const windows = Math.ceil(HOUR / PAIRING_DEFAULTS.lockoutMs);
    expect(checked).toBeLessThanOrEqual(PAIRING_DEFAULTS.maxFailedAttempts * windows);
    expect(hits).toBe(0);
    // the odds of any hit with that many checked guesses against 3 live codes in 32^8
    const odds = (checked * codes.size) / PAIRING_CODE_ALPHABET.length ** PAIRING_CODE_LENGTH;
    expect(odds).toBeLessThan(1e-10);
  });
});
