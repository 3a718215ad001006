// The sticky session lease (session-leases.ts) on a real SQLite store: kept a few ms after a turn for this
// process's next turn of the session (reused: no acquisition, same token), then settled (the store's flush)
// and released; a waiter elsewhere gets it once it is let go; a closing store releases a lease still kept;
// a lease is reused at most a bounded number of turns in a row.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { SessionLeases } from "./session-leases.ts";

const dirs: string[] = [];
const stores: SqliteSessionStore[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function store(): Promise<SqliteSessionStore> {
  const dir = mkdtempSync(join(tmpdir(), "sticky-lease-"));
  dirs.push(dir);
  const opened = await openSessionStore({ stateDir: dir });
  stores.push(opened);
  return opened;
}

const KEY = "agent:main:main";
const never = new AbortController().signal;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("sticky session leases", () => {
  it("the next turn of the session in this process reuses the kept lease; it is settled and released once idle", async () => {
    const shared = await store();
    const leases = new SessionLeases(shared, { keepMs: 300, owner: "here" });
    const first = await leases.acquire(KEY, never, 5_000);
    let settled = 0;
    const settle = async () => {
      settled += 1;
    };
    await leases.keep(KEY, first, settle);
    // Kept: nobody settled or released anything; the next turn takes the same lease (no new token).
    expect(settled).toBe(0);
    const second = await leases.acquire(KEY, never, 5_000);
    expect(second.lease.token).toBe(first.lease.token);
    expect(second.lease.tookOver).toBe(false);
    expect((await shared.leases.current(KEY))?.expiresAt).toBeGreaterThan(Date.now());
    await leases.keep(KEY, second, settle);
    // Idle past keepMs: settled, then released (expired in the store, free for anyone).
    await sleep(600);
    expect(settled).toBe(1);
    expect((await shared.leases.current(KEY))?.expiresAt).toBeLessThanOrEqual(Date.now());
    const third = await leases.acquire(KEY, never, 5_000);
    expect(third.lease.token).toBe(first.lease.token + 1);
    await leases.keep(KEY, third, settle);
  });

  it("a process waiting for the session gets it once the holder lets it go, within keepMs and a poll", async () => {
    const shared = await store();
    const holder = new SessionLeases(shared, { keepMs: 200, owner: "holder" });
    const waiter = new SessionLeases(shared, { keepMs: 0, owner: "waiter", pollMs: 10 });
    const held = await holder.acquire(KEY, never, 5_000);
    await holder.keep(KEY, held, async () => {});
    const asked = Date.now();
    const taken = await waiter.acquire(KEY, never, 10_000);
    expect(taken.lease.owner).toBe("waiter");
    // Generous on a loaded machine: keepMs is 200 ms.
    expect(Date.now() - asked).toBeLessThan(5_000);
    // keepMs 0: let go at once (settled and released before keep returns).
    await waiter.keep(KEY, taken, async () => {});
    expect((await shared.leases.current(KEY))?.expiresAt).toBeLessThanOrEqual(Date.now());
  });

  it("a settle that fails leaves the lease to lapse at its TTL instead of releasing it", async () => {
    const shared = await store();
    const leases = new SessionLeases(shared, { keepMs: 0, owner: "here", ttlMs: 60_000 });
    const held = await leases.acquire(KEY, never, 5_000);
    await leases.keep(KEY, held, async () => {
      throw new Error("the fold failed");
    });
    expect((await shared.leases.current(KEY))?.expiresAt).toBeGreaterThan(Date.now() + 30_000);
  });

  it("a closing store releases a lease still kept", async () => {
    const shared = await store();
    const leases = new SessionLeases(shared, { keepMs: 60_000, owner: "here" });
    const held = await leases.acquire(KEY, never, 5_000);
    await leases.keep(KEY, held, async () => {});
    await shared.close();
    const reopened = await openSessionStore({ stateDir: shared.stateDir });
    stores.push(reopened);
    expect((await reopened.leases.current(KEY))?.expiresAt).toBeLessThanOrEqual(Date.now());
  });

  it("lets the lease go after 16 reuses in a row, so a steady queue here does not keep it forever", async () => {
    const shared = await store();
    const leases = new SessionLeases(shared, { keepMs: 60_000, owner: "here" });
    const tokens: number[] = [];
    for (let turn = 0; turn < 18; turn++) {
      const held = await leases.acquire(KEY, never, 5_000);
      tokens.push(held.lease.token);
      await leases.keep(KEY, held, async () => {});
    }
    // The first lease served 17 turns (16 reuses), was let go, and a new one was acquired.
    expect(new Set(tokens.slice(0, 17)).size).toBe(1);
    expect(tokens[17]).toBe((tokens[0] ?? 0) + 1);
  });
});
