import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PiSessionBindingCache } from "./binding-cache.ts";
import { openPiSessionManager } from "./pi-session-manager.ts";

const AGENT = "main";
const target = { agentId: AGENT, sessionId: "warm", cwd: "/workspace" };

let stateDir: string;
let store: SqliteSessionStore;

beforeEach(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "binding-cache-"));
  store = await openSessionStore({ stateDir });
});
afterEach(async () => {
  await store.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const texts = (cache: PiSessionBindingCache) =>
  cache
    .acquire(store, target)
    .sessionManager.buildSessionContext()
    .messages.map((message) => (message as { content: string }).content);

describe("warm pi session bindings", () => {
  it("reuses a handed-back binding while the store holds exactly what it holds", () => {
    const cache = new PiSessionBindingCache();
    const first = cache.acquire(store, target);
    expect(first.isNew).toBe(true);
    first.sessionManager.appendMessage({ role: "user", content: "one", timestamp: 1 });
    first.sessionManager.appendThinkingLevelChange("high");
    cache.release(store, target, first);

    const second = cache.acquire(store, target);
    expect(second.sessionManager).toBe(first.sessionManager);
    expect(second.isNew).toBe(false);
    expect(second.storedThinkingLevel).toBe("high");
    // Checked out: a concurrent turn of the same session gets its own binding.
    const concurrent = cache.acquire(store, target);
    expect(concurrent.sessionManager).not.toBe(first.sessionManager);
    // Another store (another database) never sees this one's bindings.
    expect(
      cache.acquire({ openTranscript: store.openTranscript.bind(store) }, target).sessionManager,
    ).not.toBe(first.sessionManager);
  });

  it("reopens from the store when someone else appended or moved the leaf", () => {
    const cache = new PiSessionBindingCache();
    const binding = cache.acquire(store, target);
    const one = binding.sessionManager.appendMessage({ role: "user", content: "one", timestamp: 1 });
    cache.release(store, target, binding);

    // Another writer (another process, or another handle) appends.
    openPiSessionManager(store, target).sessionManager.appendMessage({
      role: "user",
      content: "two",
      timestamp: 2,
    });
    expect(texts(cache)).toEqual(["one", "two"]);

    const again = cache.acquire(store, target);
    cache.release(store, target, again);
    store.openTranscript(AGENT, target.sessionId).setLeaf(one);
    const moved = cache.acquire(store, target);
    expect(moved.sessionManager).not.toBe(again.sessionManager);
    expect(moved.sessionManager.getLeafId()).toBe(one);
  });

  it("never reuses a binding whose write failed", async () => {
    const cache = new PiSessionBindingCache();
    const binding = cache.acquire(store, target);
    binding.sessionManager.appendMessage({ role: "user", content: "stored", timestamp: 1 });
    await store.close();
    expect(() =>
      binding.sessionManager.appendMessage({ role: "user", content: "lost", timestamp: 2 }),
    ).toThrow(/could not store entry/);
    expect(binding.isInSync()).toBe(false);
    store = await openSessionStore({ stateDir });
    cache.release(store, target, binding);
    expect(texts(cache)).toEqual(["stored"]);
  });

  it("keeps at most maxSessions warm bindings per store, the least recently used go first", () => {
    const cache = new PiSessionBindingCache({ maxSessions: 1 });
    const a = { ...target, sessionId: "a" };
    const b = { ...target, sessionId: "b" };
    const bindingA = cache.acquire(store, a);
    const bindingB = cache.acquire(store, b);
    cache.release(store, a, bindingA);
    cache.release(store, b, bindingB);
    expect(cache.acquire(store, a).sessionManager).not.toBe(bindingA.sessionManager);
    expect(cache.acquire(store, b).sessionManager).toBe(bindingB.sessionManager);
  });

  it("tells its owner about every binding that leaves without serving another turn", () => {
    const dropped: string[] = [];
    const cache = new PiSessionBindingCache({
      maxSessions: 1,
      onDrop: (binding) => dropped.push(binding.transcript.sessionId),
    });
    const a = { ...target, sessionId: "a" };
    const b = { ...target, sessionId: "b" };
    const bindingA = cache.acquire(store, a);
    cache.release(store, a, bindingA);
    // Evicted: the least recently used goes.
    cache.release(store, b, cache.acquire(store, b));
    expect(dropped).toEqual(["a"]);
    // Replaced by a newer binding of the same session (two concurrent turns, the later one handed back last).
    const first = cache.acquire(store, b);
    const second = cache.acquire(store, b);
    cache.release(store, b, first);
    cache.release(store, b, second);
    expect(dropped).toEqual(["a", "b"]);
    // Found out of sync: someone else appended.
    openPiSessionManager(store, b).sessionManager.appendMessage({ role: "user", content: "x", timestamp: 1 });
    expect(cache.acquire(store, b).sessionManager).not.toBe(second.sessionManager);
    expect(dropped).toEqual(["a", "b", "b"]);
    // Forgotten with its store.
    cache.release(store, a, cache.acquire(store, a));
    cache.forget(store);
    expect(dropped).toEqual(["a", "b", "b", "a"]);
  });
});
