// The conformance suite every session-store backend passes (SQLite now, PostgreSQL later). Owns: the
// behaviour a backend must show through the public `SessionStore` interface — session CRUD, patch conflicts,
// reset, the transcript tree and branches (including a property test against a model), runs and events,
// interrupted-run recovery, auth/queue/cron state, and migrations (fresh, from the first schema, from the
// future). Does not own: backend-specific set-up (the factory) or the legacy-import part (import-conformance.ts).
import { hostname } from "node:os";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  SessionConflictError,
  StoreVersionError,
  TranscriptConflictError,
  TranscriptNotFoundError,
} from "../errors.ts";
import { readProcessStart } from "../owner-process.ts";
import type { RunOwner } from "../runs.ts";
import type { SessionStore } from "../store.ts";
import type { Transcript, TranscriptEntry, TranscriptHeader } from "../transcript.ts";
import { runImportConformance } from "./import-conformance.ts";

/** One isolated storage location of a backend. */
export interface StoreFixture {
  /** Opens the fixture's storage (migrating it). Close the store before opening again to model a restart. */
  open(): Promise<SessionStore>;
  /** Removes the storage. */
  dispose(): Promise<void>;
  /** Optional: fills the (still unopened) storage with the first schema holding `FIRST_SCHEMA_SAMPLE`. */
  seedFirstSchema?(): Promise<void>;
  /** Optional: marks the storage as written by a newer release at schema `version`. */
  seedFutureVersion?(version: number): Promise<void>;
  /**
   * Optional: writes a `running` run owned by `owner` straight into the (migrated, closed) storage, as an open
   * store of another process would have (a backend that tracks live stores also registers `owner.token` as live).
   */
  seedRunningRun?(run: SeededRun): Promise<void>;
}

/** A running run as another process's store wrote it. */
export interface SeededRun {
  readonly runId: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly owner: RunOwner;
}

/** Returns a fresh, isolated, empty fixture each call. */
export type SessionStoreFactory = () => Promise<StoreFixture>;

/** What the frozen first-schema fixture holds (fixtures/schema-v1 for SQLite). */
export const FIRST_SCHEMA_SAMPLE = {
  agentId: "main",
  sessionKey: "agent:main:main",
  sessionId: "0b7c1f7e-0000-4000-8000-00000000v001",
  meta: {
    thinkingLevel: "high",
    modelOverride: "claude-x",
    providerOverride: "anthropic",
    modelOverrideSource: "user",
  },
  runId: "run-v1",
  runEvents: [
    { seq: 1, ts: 1_700_000_000_001, stream: "lifecycle", data: { phase: "start" } },
    { seq: 2, ts: 1_700_000_000_002, stream: "assistant", data: { text: "hello" } },
  ],
  /** Entry ids in append order; `e3` branches from `e1`; the leaf was moved back to `e2`. */
  entryIds: ["e1", "e2", "e3"],
  leafId: "e2",
  branchToLeaf: ["e1", "e2"],
} as const;

export function header(sessionId: string, cwd = "/work"): TranscriptHeader {
  return { type: "session", version: 3, id: sessionId, timestamp: "2026-01-01T00:00:00.000Z", cwd };
}

export function messageEntry(id: string, parentId: string | null, text = `text of ${id}`): TranscriptEntry {
  return {
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: [{ type: "text", text }], timestamp: 1_767_225_601_000 },
  };
}

async function withStore(
  factory: SessionStoreFactory,
  body: (store: SessionStore, fixture: StoreFixture) => Promise<void>,
) {
  const fixture = await factory();
  const store = await fixture.open();
  try {
    await body(store, fixture);
  } finally {
    await store.close();
    await fixture.dispose();
  }
}

const ref = { agentId: "main", sessionKey: "agent:main:telegram:direct:42" };

/** Makes transcripts usable through the synchronous calls (PostgreSQL loads them; SQLite has nothing to do). */
async function load(store: SessionStore, agentId: string, ...sessionIds: string[]): Promise<void> {
  for (const sessionId of sessionIds) await store.loadTranscript(agentId, sessionId);
}

export function runSessionStoreConformance(factory: SessionStoreFactory): void {
  describe("sessions", () => {
    it("creates, reads, lists and deletes sessions; create with the same id is idempotent", () =>
      withStore(factory, async (store) => {
        const created = await store.sessions.create({
          ...ref,
          sessionId: "s1",
          meta: { label: "hi" },
          now: 1000,
        });
        expect(created).toMatchObject({
          ...ref,
          sessionId: "s1",
          version: 1,
          createdAt: 1000,
          updatedAt: 1000,
        });
        expect(created.meta).toEqual({ label: "hi" });
        expect(await store.sessions.get(ref)).toEqual(created);
        expect(await store.sessions.getBySessionId("main", "s1")).toEqual(created);
        expect(await store.sessions.create({ ...ref, sessionId: "s1" })).toEqual(created);
        await expect(store.sessions.create({ ...ref, sessionId: "other" })).rejects.toThrow(
          /already exists with sessionId s1/,
        );
        expect(await store.sessions.ensure({ ...ref, sessionId: "other" })).toEqual(created);
        await store.sessions.create({
          agentId: "main",
          sessionKey: "agent:main:main",
          sessionId: "s2",
          now: 2000,
        });
        await store.sessions.create({ agentId: "ops", sessionKey: "agent:ops:main", sessionId: "s3" });
        expect((await store.sessions.list("main")).map((s) => s.sessionId)).toEqual(["s2", "s1"]);
        expect(await store.sessions.delete(ref)).toBe(true);
        expect(await store.sessions.delete(ref)).toBe(false);
        expect(await store.sessions.get(ref)).toBeUndefined();
      }));

    it("patches fields (null removes) and bumps the version; a stale expectedVersion is refused", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({ ...ref, sessionId: "s1", meta: { label: "a", thinkingLevel: "low" } });
        const patched = await store.sessions.patch(ref, {
          label: null,
          thinkingLevel: "high",
          inputTokens: 10,
        });
        expect(patched.version).toBe(2);
        expect(patched.meta.label).toBeUndefined();
        expect(patched.meta).toMatchObject({ thinkingLevel: "high", inputTokens: 10 });
        expect(await store.sessions.get(ref)).toEqual(patched);
        await expect(
          store.sessions.patch(ref, { label: "x" }, { expectedVersion: 1 }),
        ).rejects.toBeInstanceOf(SessionConflictError);
        expect((await store.sessions.get(ref))?.meta.label).toBeUndefined();
        await expect(store.sessions.patch({ ...ref, sessionKey: "missing" }, {})).rejects.toThrow(
          /no session/,
        );
      }));

    it("re-applies an updater to the fresh row when a concurrent write wins, keeping both changes", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({ ...ref, sessionId: "s1", meta: { inputTokens: 0 } });
        const seen: number[] = [];
        const result = await store.sessions.patch(ref, async (current) => {
          seen.push(current.version);
          if (seen.length === 1) await store.sessions.patch(ref, { label: "concurrent", inputTokens: 5 });
          return { inputTokens: (current.meta.inputTokens ?? 0) + 1 };
        });
        expect(seen).toEqual([1, 2]);
        expect(result.version).toBe(3);
        expect(result.meta).toMatchObject({ label: "concurrent", inputTokens: 6 });
        expect(await store.sessions.get(ref)).toEqual(result);
      }));

    it("gives up after maxAttempts lost races without overwriting the winners", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({ ...ref, sessionId: "s1", meta: { inputTokens: 0 } });
        let calls = 0;
        const attempt = store.sessions.patch(
          ref,
          async (current) => {
            calls++;
            await store.sessions.patch(ref, { inputTokens: (current.meta.inputTokens ?? 0) + 100 });
            return { label: "loser" };
          },
          { maxAttempts: 3 },
        );
        await expect(attempt).rejects.toBeInstanceOf(SessionConflictError);
        expect(calls).toBe(3);
        const stored = await store.sessions.get(ref);
        expect(stored?.meta.label).toBeUndefined();
        expect(stored?.meta.inputTokens).toBe(300);
        expect(stored?.version).toBe(4);
      }));

    it("keeps every increment of many concurrent patches", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({ ...ref, sessionId: "s1", meta: { outputTokens: 0 } });
        await Promise.all(
          Array.from({ length: 20 }, () =>
            store.sessions.patch(ref, (current) => ({ outputTokens: (current.meta.outputTokens ?? 0) + 1 }), {
              maxAttempts: 50,
            }),
          ),
        );
        expect((await store.sessions.get(ref))?.meta.outputTokens).toBe(20);
      }));

    it("reset mints a new sessionId, keeps user-sourced overrides and clears auto-sourced ones", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({
          ...ref,
          sessionId: "s1",
          meta: {
            thinkingLevel: "high",
            queueMode: "collect",
            label: "my chat",
            modelOverride: "gpt-x",
            providerOverride: "openai",
            modelOverrideSource: "user",
            authProfileOverride: "anthropic:auto",
            authProfileOverrideSource: "auto",
            authProfileOverrideCompactionCount: 2,
            compactionCount: 7,
            inputTokens: 900,
            systemSent: true,
            abortedLastRun: true,
            lastTo: "chat-42",
            fallbackNoticeReason: "rate_limit",
          },
        });
        const { previous, current } = await store.sessions.reset(ref, { now: 5000 });
        expect(previous.sessionId).toBe("s1");
        expect(current.sessionId).not.toBe("s1");
        expect(current.meta).toEqual({
          thinkingLevel: "high",
          queueMode: "collect",
          label: "my chat",
          modelOverride: "gpt-x",
          providerOverride: "openai",
          modelOverrideSource: "user",
          sessionStartedAt: 5000,
          systemSent: false,
          abortedLastRun: false,
          compactionCount: 0,
          inputTokens: 0,
          outputTokens: 0,
          totalTokens: 0,
          totalTokensFresh: true,
        });
        expect(await store.sessions.getBySessionId("main", "s1")).toBeUndefined();
        const again = await store.sessions.reset(ref, { sessionId: "s2" });
        const repeated = await store.sessions.reset(ref, { sessionId: "s2" });
        expect(repeated.current).toEqual(again.current);
        const autoModel = await store.sessions.patch(ref, {
          modelOverride: "fallback-model",
          modelOverrideSource: "auto",
          authProfileOverride: "anthropic:me",
          authProfileOverrideSource: "user",
        });
        const afterAuto = await store.sessions.reset({
          agentId: autoModel.agentId,
          sessionKey: autoModel.sessionKey,
        });
        expect(afterAuto.current.meta.modelOverride).toBeUndefined();
        expect(afterAuto.current.meta.authProfileOverride).toBe("anthropic:me");
      }));

    it("survives a restart", async () => {
      const fixture = await factory();
      try {
        const first = await fixture.open();
        await first.sessions.create({ ...ref, sessionId: "s1", meta: { label: "kept" } });
        await first.close();
        const second = await fixture.open();
        expect((await second.sessions.get(ref))?.meta.label).toBe("kept");
        await second.close();
      } finally {
        await fixture.dispose();
      }
    });
  });

  describe("transcript", () => {
    it("needs a header to create; reopens without one", () =>
      withStore(factory, async (store) => {
        await load(store, "main", "s1", "s2");
        expect(() => store.openTranscript("main", "s1")).toThrow(TranscriptNotFoundError);
        expect(store.hasTranscript("main", "s1")).toBe(false);
        const transcript = store.openTranscript("main", "s1", { header: header("s1") });
        expect(transcript.getHeader()).toEqual(header("s1"));
        expect(transcript.getLeafId()).toBeNull();
        expect(transcript.getBranch()).toEqual([]);
        expect(store.hasTranscript("main", "s1")).toBe(true);
        const again = store.openTranscript("main", "s1", { header: header("s1", "/elsewhere") });
        expect(again.getHeader()?.cwd).toBe("/work");
        expect(() => store.openTranscript("main", "s2", { header: header("s3") })).toThrow(/does not match/);
      }));

    it("appends a chain, moves the leaf, and reads branch, entries, children, entry and count", () =>
      withStore(factory, async (store) => {
        await load(store, "main", "s1");
        const t = store.openTranscript("main", "s1", { header: header("s1") });
        t.append(messageEntry("a", null));
        t.append(messageEntry("b", "a"));
        t.append(messageEntry("c", "b"));
        expect(t.getLeafId()).toBe("c");
        expect(ids(t.getBranch())).toEqual(["a", "b", "c"]);
        expect(ids(t.getBranch("b"))).toEqual(["a", "b"]);
        expect(t.getBranch(null)).toEqual([]);
        expect(t.getBranch("unknown")).toEqual([]);
        expect(ids(t.getEntries())).toEqual(["a", "b", "c"]);
        expect(ids(t.getChildren(null))).toEqual(["a"]);
        expect(ids(t.getChildren("a"))).toEqual(["b"]);
        expect(t.getEntry("b")).toEqual(messageEntry("b", "a"));
        expect(t.getEntry("zzz")).toBeUndefined();
        expect(t.count()).toBe(3);
      }));

    it("stores entries verbatim, whatever their type and fields", () =>
      withStore(factory, async (store) => {
        await load(store, "main", "s1");
        const t = store.openTranscript("main", "s1", { header: header("s1") });
        const entries: TranscriptEntry[] = [
          {
            type: "message",
            id: "sys",
            parentId: null,
            timestamp: "2026-01-01T00:00:00.000Z",
            message: {
              role: "system",
              sections: { identity: "You are 🤖 \u0000-free", tools: "echo" },
              toolsAdded: [
                { name: "echo", description: "Echo", parameters: { type: "object", properties: {} } },
              ],
            },
          },
          {
            type: "model_change",
            id: "m",
            parentId: "sys",
            timestamp: "t",
            provider: "anthropic",
            modelId: "x",
          },
          { type: "thinking_level_change", id: "th", parentId: "m", timestamp: "t", thinkingLevel: "high" },
          {
            type: "compaction",
            id: "co",
            parentId: "th",
            timestamp: "t",
            summary: "## Goal\n",
            firstKeptEntryId: "m",
            tokensBefore: 1234,
            details: { nested: [1, 2, { deep: null }] },
          },
          { type: "branch_summary", id: "bs", parentId: "co", timestamp: "t", fromId: "root", summary: "s" },
          {
            type: "context_edit",
            id: "ce",
            parentId: "bs",
            timestamp: "t",
            targetId: "m",
            replacement: null,
          },
          { type: "label", id: "la", parentId: "ce", timestamp: "t", targetId: "sys", label: "start" },
          { type: "session_info", id: "si", parentId: "la", timestamp: "t", name: "demo" },
          { type: "custom", id: "cu", parentId: "si", timestamp: "t", customType: "x", data: { a: 1.5 } },
          {
            type: "custom_message",
            id: "cm",
            parentId: "cu",
            timestamp: "t",
            customType: "x",
            content: "c",
            display: true,
          },
          { type: "a_future_type", id: "fu", parentId: "cm", timestamp: "t", whatever: [true, "ü"] },
        ];
        for (const entry of entries) t.append(entry);
        expect(t.getEntries()).toEqual(entries);
        expect(t.getBranch()).toEqual(entries);
      }));

    it("treats a repeated identical append as a no-op and refuses conflicting or dangling ones", () =>
      withStore(factory, async (store) => {
        await load(store, "main", "s1");
        const t = store.openTranscript("main", "s1", { header: header("s1") });
        const a = messageEntry("a", null);
        t.append(a);
        t.append(messageEntry("b", "a"));
        // The same content in another key order is the same entry.
        t.append({ timestamp: a.timestamp, message: a.message, parentId: null, id: "a", type: "message" });
        expect(t.count()).toBe(2);
        expect(t.getLeafId()).toBe("a");
        t.setLeaf("b");
        expect(() => t.append(messageEntry("a", null, "other text"))).toThrow(TranscriptConflictError);
        expect(() => t.append(messageEntry("x", "missing"))).toThrow(/parent missing does not exist/);
        expect(() => t.append({ ...messageEntry("", null) })).toThrow(/id must be a non-empty string/);
        expect(t.count()).toBe(2);
        expect(t.getLeafId()).toBe("b");
        expect(t.getEntry("a")).toEqual(a);
      }));

    it("branches: setLeaf moves the leaf (persisted), the next append becomes a sibling", async () => {
      const fixture = await factory();
      try {
        const store = await fixture.open();
        await load(store, "main", "s1");
        const t = store.openTranscript("main", "s1", { header: header("s1") });
        t.append(messageEntry("a", null));
        t.append(messageEntry("b", "a"));
        t.setLeaf("a");
        expect(t.getLeafId()).toBe("a");
        expect(() => t.setLeaf("nope")).toThrow(TranscriptConflictError);
        expect(t.getLeafId()).toBe("a");
        await store.close();
        const reopened = await fixture.open();
        await load(reopened, "main", "s1");
        const again = reopened.openTranscript("main", "s1");
        expect(again.getLeafId()).toBe("a");
        again.append(messageEntry("c", "a"));
        expect(ids(again.getChildren("a"))).toEqual(["b", "c"]);
        expect(ids(again.getBranch())).toEqual(["a", "c"]);
        expect(ids(again.getBranch("b"))).toEqual(["a", "b"]);
        again.setLeaf(null);
        expect(again.getBranch()).toEqual([]);
        again.append(messageEntry("r2", null));
        expect(ids(again.getChildren(null))).toEqual(["a", "r2"]);
        expect(ids(again.getEntries())).toEqual(["a", "b", "c", "r2"]);
        await reopened.close();
      } finally {
        await fixture.dispose();
      }
    });

    it("forks a branch into a new session without touching the source", () =>
      withStore(factory, async (store) => {
        await load(store, "main", "s1", "s2");
        const t = store.openTranscript("main", "s1", { header: header("s1") });
        t.append(messageEntry("a", null));
        t.append(messageEntry("b", "a"));
        t.append(messageEntry("c", "a"));
        const fork = store.forkTranscript("main", "s1", { sessionId: "s2", leafId: "b" });
        expect(fork.getHeader()).toMatchObject({ id: "s2", parentSession: "s1", cwd: "/work" });
        expect(ids(fork.getEntries())).toEqual(["a", "b"]);
        expect(fork.getLeafId()).toBe("b");
        fork.append(messageEntry("d", "b"));
        expect(t.count()).toBe(3);
        expect(t.getLeafId()).toBe("c");
        expect(() => store.forkTranscript("main", "s1", { sessionId: "s2" })).toThrow(
          /already has a transcript/,
        );
      }));

    it("keeps sessions and agents apart", () =>
      withStore(factory, async (store) => {
        await load(store, "main", "s1", "s2");
        await load(store, "ops", "s1");
        const one = store.openTranscript("main", "s1", { header: header("s1") });
        const two = store.openTranscript("main", "s2", { header: header("s2") });
        const other = store.openTranscript("ops", "s1", { header: header("s1") });
        one.append(messageEntry("a", null));
        two.append(messageEntry("a", null, "different content, different session"));
        other.append(messageEntry("a", null, "other agent"));
        expect(one.count() + two.count() + other.count()).toBe(3);
        expect(() => two.append(messageEntry("b", "nothing-here"))).toThrow(TranscriptConflictError);
        expect(other.getEntry("a")?.message).toMatchObject({ content: [{ text: "other agent" }] });
      }));

    it("makes every change durable by flush(): a second store sees it, and a later load brings in the other's appends", async () => {
      const fixture = await factory();
      try {
        const writer = await fixture.open();
        const reader = await fixture.open();
        await load(writer, "main", "s1");
        const t = writer.openTranscript("main", "s1", { header: header("s1") });
        t.append(messageEntry("a", null));
        t.append(messageEntry("b", "a"));
        t.setLeaf("a");
        await writer.flush();
        await load(reader, "main", "s1");
        const seen = reader.openTranscript("main", "s1");
        expect(ids(seen.getEntries())).toEqual(["a", "b"]);
        expect(seen.getLeafId()).toBe("a");
        t.append(messageEntry("c", "a"));
        await writer.flush();
        await load(reader, "main", "s1");
        expect(ids(seen.getBranch())).toEqual(["a", "c"]);
        expect(seen.count()).toBe(3);
        await writer.close();
        await reader.close();
      } finally {
        await fixture.dispose();
      }
    });

    it("matches an in-memory tree model under random appends and leaf moves", () =>
      withStore(factory, async (store) => {
        let sessionCounter = 0;
        type Op = { kind: "append"; parentPick: number; fromLeaf: boolean } | { kind: "leaf"; pick: number };
        const op: fc.Arbitrary<Op> = fc.oneof(
          fc.record({ kind: fc.constant("append" as const), parentPick: fc.nat(), fromLeaf: fc.boolean() }),
          fc.record({ kind: fc.constant("leaf" as const), pick: fc.nat() }),
        );
        await fc.assert(
          fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
            const sessionId = `prop-${sessionCounter++}`;
            await load(store, "main", sessionId);
            const t = store.openTranscript("main", sessionId, { header: header(sessionId) });
            const model = new Map<string, string | null>();
            const order: string[] = [];
            let leaf: string | null = null;
            for (const step of ops) {
              if (step.kind === "append") {
                const id = `n${order.length}`;
                const parent: string | null =
                  step.fromLeaf || order.length === 0 ? leaf : pick(order, step.parentPick);
                t.append(messageEntry(id, parent));
                model.set(id, parent);
                order.push(id);
                leaf = id;
              } else {
                const target: string | null = order.length === 0 ? null : pick([null, ...order], step.pick);
                t.setLeaf(target);
                leaf = target;
              }
            }
            const branch: string[] = [];
            for (let at: string | null = leaf; at !== null; at = model.get(at) ?? null) branch.unshift(at);
            expect(t.getLeafId()).toBe(leaf);
            expect(ids(t.getBranch())).toEqual(branch);
            expect(ids(t.getEntries())).toEqual(order);
            expect(t.count()).toBe(order.length);
            for (const parent of [null, ...order]) {
              expect(ids(t.getChildren(parent))).toEqual(order.filter((id) => model.get(id) === parent));
            }
          }),
          { numRuns: 40 },
        );
      }));
  });

  describe("runs", () => {
    const run = { runId: "r1", ...ref, sessionId: "s1", entryPoint: "agent", startedAt: 100 };

    it("starts, updates and finishes a run; repeated writes are idempotent, conflicting ones refused", () =>
      withStore(factory, async (store) => {
        const started = await store.runs.start({ ...run, provider: "anthropic", model: "claude" });
        expect(started).toMatchObject({ runId: "r1", status: "running", startedAt: 100, fallbackChain: [] });
        expect(await store.runs.start(run)).toEqual(started);
        await expect(store.runs.start({ ...run, sessionId: "s9" })).rejects.toThrow(/already exists/);
        const chain = [
          { provider: "anthropic", model: "claude", reason: "rate_limit", authProfileId: "anthropic:a" },
          { provider: "openai", model: "gpt" },
        ];
        await store.runs.update("r1", {
          fallbackChain: chain,
          provider: "openai",
          model: "gpt",
          authProfileId: "openai:b",
        });
        const finished = await store.runs.finish("r1", {
          status: "succeeded",
          endedAt: 200,
          usage: { input: 10, output: 5, total: 15 },
          costUsd: 0.25,
          thinkingLevel: "low",
        });
        expect(finished).toMatchObject({
          status: "succeeded",
          endedAt: 200,
          provider: "openai",
          model: "gpt",
          authProfileId: "openai:b",
          fallbackChain: chain,
          usage: { input: 10, output: 5, total: 15 },
          costUsd: 0.25,
          thinkingLevel: "low",
        });
        expect(await store.runs.finish("r1", { status: "succeeded", endedAt: 999 })).toEqual(finished);
        await expect(store.runs.finish("r1", { status: "failed", errorReason: "x" })).rejects.toThrow(
          /already ended as succeeded/,
        );
        await store.runs.start({ ...run, runId: "r2", startedAt: 300 });
        await store.runs.finish("r2", { status: "failed", errorReason: "billing", errorMessage: "pay up" });
        expect((await store.runs.listForSession(ref)).map((r) => r.runId)).toEqual(["r2", "r1"]);
        expect(await store.runs.get("r2")).toMatchObject({
          status: "failed",
          errorReason: "billing",
          errorMessage: "pay up",
        });
        expect(await store.runs.get("nope")).toBeUndefined();
      }));

    it("keys events by seq: ordered, repeated appends change nothing, a reused seq with other content throws", () =>
      withStore(factory, async (store) => {
        await store.runs.start(run);
        const events = [
          { seq: 2, ts: 2, stream: "assistant", data: { text: "b" } },
          { seq: 1, ts: 1, stream: "lifecycle", data: { phase: "start" } },
          { seq: 3, ts: 3, stream: "tool", data: null },
        ];
        await store.runs.appendEvents("r1", events);
        await store.runs.appendEvents("r1", events.slice(0, 2));
        expect((await store.runs.events("r1")).map((e) => e.seq)).toEqual([1, 2, 3]);
        expect(await store.runs.events("r1", { afterSeq: 1 })).toEqual([events[0], events[2]]);
        await expect(
          store.runs.appendEvents("r1", [
            { seq: 4, ts: 4, stream: "x", data: 1 },
            { seq: 2, ts: 2, stream: "assistant", data: "changed" },
          ]),
        ).rejects.toThrow(/different event with seq 2/);
        expect((await store.runs.events("r1")).map((e) => e.seq)).toEqual([1, 2, 3]);
        await expect(store.runs.appendEvents("missing", events)).rejects.toThrow(/no run missing/);
      }));

    it("finishes a run together with its buffered events; a refused event leaves it running and unchanged", () =>
      withStore(factory, async (store) => {
        await store.runs.start(run);
        await store.runs.appendEvents("r1", [
          { seq: 1, ts: 1, stream: "lifecycle", data: { phase: "start" } },
        ]);
        await expect(
          store.runs.finish("r1", {
            status: "succeeded",
            endedAt: 5,
            events: [
              { seq: 2, ts: 2, stream: "assistant", data: { text: "new" } },
              { seq: 1, ts: 1, stream: "lifecycle", data: { phase: "changed" } },
            ],
          }),
        ).rejects.toThrow(/different event with seq 1/);
        expect(await store.runs.get("r1")).toMatchObject({ status: "running" });
        expect((await store.runs.events("r1")).map((e) => e.seq)).toEqual([1]);
        const events = [
          { seq: 2, ts: 2, stream: "assistant", data: { text: "done" } },
          { seq: 3, ts: 3, stream: "lifecycle", data: { phase: "end" } },
        ];
        const finished = await store.runs.finish("r1", { status: "succeeded", endedAt: 6, events });
        expect(finished).toMatchObject({ status: "succeeded", endedAt: 6 });
        expect((await store.runs.events("r1")).map((e) => e.seq)).toEqual([1, 2, 3]);
        // Repeating the same finish with the same events is a no-op; the run stays as it was.
        expect(await store.runs.finish("r1", { status: "succeeded", endedAt: 9, events })).toEqual(finished);
        await expect(store.runs.finish("missing", { status: "failed", events })).rejects.toThrow(
          /no run missing/,
        );
      }));

    it("marks runs left running by a store that is gone as interrupted on the next open, and only those", async () => {
      const fixture = await factory();
      try {
        const crashed = await fixture.open();
        await crashed.runs.start({ ...run, runId: "orphan" });
        await crashed.runs.start({ ...run, runId: "done" });
        await crashed.runs.finish("done", { status: "succeeded" });
        const alive = await fixture.open();
        await alive.runs.start({ ...run, runId: "live" });
        expect(alive.recoveredRuns).toEqual([]);
        expect((await alive.runs.get("orphan"))?.status).toBe("running");
        await crashed.close();
        const next = await fixture.open();
        expect(next.recoveredRuns.map((r) => r.runId)).toEqual(["orphan"]);
        expect(await next.runs.get("orphan")).toMatchObject({
          status: "interrupted",
          errorReason: "interrupted",
        });
        expect((await next.runs.get("done"))?.status).toBe("succeeded");
        expect((await next.runs.get("live"))?.status).toBe("running");
        await expect(next.runs.finish("orphan", { status: "succeeded" })).rejects.toThrow(
          /already ended as interrupted/,
        );
        await alive.close();
        await next.close();
      } finally {
        await fixture.dispose();
      }
    });

    it("tells a run's owner from a process that took its pid later or in another boot; rows without a start time go by the pid", async (context) => {
      // A live process other than this one, with its real start (Linux /proc); elsewhere there is nothing to compare.
      const pid = process.ppid;
      const start = readProcessStart(pid);
      const fixture = await factory();
      try {
        if (fixture.seedRunningRun === undefined || start === undefined) return context.skip();
        await (await fixture.open()).close();
        const seed = (runId: string, owner: Partial<RunOwner>) =>
          fixture.seedRunningRun?.({
            ...run,
            runId,
            owner: { host: hostname(), pid, token: `token-${runId}`, ...owner },
          });
        await seed("owner", start);
        await seed("reused", { ...start, startTime: start.startTime + 1 });
        await seed("rebooted", { ...start, bootId: "another-boot" });
        await seed("legacy", {});
        const store = await fixture.open();
        try {
          expect(store.recoveredRuns.map((r) => r.runId).sort()).toEqual(["rebooted", "reused"]);
          expect(await store.runs.get("reused")).toMatchObject({
            status: "interrupted",
            errorReason: "interrupted",
          });
          expect((await store.runs.get("rebooted"))?.status).toBe("interrupted");
          expect((await store.runs.get("owner"))?.status).toBe("running");
          expect((await store.runs.get("legacy"))?.status).toBe("running");
        } finally {
          await store.close();
        }
      } finally {
        await fixture.dispose();
      }
    });
  });

  describe("auth, queue and cron state", () => {
    it("stores auth-profile usage state per agent and profile, merging concurrent updates", () =>
      withStore(factory, async (store) => {
        const state = await store.auth.update(
          "main",
          "anthropic:me",
          (current) => ({
            ...current,
            errorCount: current.errorCount + 1,
            failureCounts: { ...current.failureCounts, rate_limit: 1 },
            cooldownUntil: 60_000,
            cooldownReason: "rate_limit",
            cooldownModel: "claude-x",
            lastFailureAt: 30_000,
          }),
          { now: 30_000 },
        );
        expect(state).toMatchObject({
          version: 1,
          errorCount: 1,
          cooldownModel: "claude-x",
          failureCounts: { rate_limit: 1 },
        });
        await Promise.all(
          Array.from({ length: 5 }, () =>
            store.auth.update("main", "anthropic:me", (c) => ({ ...c, errorCount: c.errorCount + 1 }), {
              maxAttempts: 20,
            }),
          ),
        );
        expect((await store.auth.get("main", "anthropic:me"))?.errorCount).toBe(6);
        await store.auth.update("main", "openai:me", (c) => ({ ...c, lastUsed: 5 }));
        expect((await store.auth.list("main")).map((s) => s.profileId)).toEqual([
          "anthropic:me",
          "openai:me",
        ]);
        expect(await store.auth.list("ops")).toEqual([]);
        expect(await store.auth.delete("main", "openai:me")).toBe(true);
      }));

    it("queues items: idempotent enqueue, exclusive claims with leases, completion and retry", () =>
      withStore(factory, async (store) => {
        const item = { itemId: "q1", ...ref, kind: "followup", payload: { text: "hi" }, now: 10 };
        await store.queue.enqueue(item);
        expect(await store.queue.enqueue(item)).toMatchObject({ itemId: "q1", status: "pending" });
        await expect(store.queue.enqueue({ ...item, payload: { text: "other" } })).rejects.toThrow(
          /other content/,
        );
        await store.queue.enqueue({ ...item, itemId: "q2", now: 20 });
        // Concurrent claimers: which two win depends on the backend's scheduling (a pool serves them in any
        // order), never that two items go to two claimers and the third gets nothing.
        const claims = await Promise.all([
          store.queue.claimNext({ agentId: "main", owner: "w1", leaseMs: 1000, now: 100 }),
          store.queue.claimNext({ agentId: "main", owner: "w2", leaseMs: 1000, now: 100 }),
          store.queue.claimNext({ agentId: "main", owner: "w3", leaseMs: 1000, now: 100 }),
        ]);
        const claimed = claims.filter((claim) => claim !== undefined);
        expect(claimed).toHaveLength(2);
        expect(new Set(claimed.map((claim) => claim.itemId))).toEqual(new Set(["q1", "q2"]));
        expect(new Set(claimed.map((claim) => claim.claimedBy)).size).toBe(2);
        const [byFirst] = claimed;
        const firstOwner = byFirst?.claimedBy ?? "";
        const otherOwner = ["w1", "w2", "w3"].find((owner) => owner !== firstOwner) ?? "";
        expect(byFirst?.attempts).toBe(1);
        await store.queue.complete(byFirst?.itemId ?? "", firstOwner);
        await expect(store.queue.complete(byFirst?.itemId ?? "", otherOwner)).rejects.toThrow(
          new RegExp(`not claimed by ${otherOwner}`),
        );
        const expired = await store.queue.claimNext({
          agentId: "main",
          owner: "w4",
          leaseMs: 1000,
          now: 5000,
        });
        expect(expired).toMatchObject({ claimedBy: "w4", attempts: 2 });
        await store.queue.fail(expired?.itemId ?? "", "w4", "boom", { retryAt: 9000 });
        expect(
          await store.queue.claimNext({ agentId: "main", owner: "w5", leaseMs: 10, now: 8000 }),
        ).toBeUndefined();
        expect((await store.queue.list({ agentId: "main", status: "done" })).length).toBe(1);
      }));

    it("stores cron job state", () =>
      withStore(factory, async (store) => {
        await store.cron.update("daily", (c) => ({
          ...c,
          agentId: "main",
          nextRunAt: 1000,
          runningSince: 900,
        }));
        const after = await store.cron.update("daily", (c) => {
          const { runningSince: _done, ...rest } = c;
          return {
            ...rest,
            lastRunAt: 900,
            lastStatus: "error",
            lastError: "x",
            consecutiveErrors: c.consecutiveErrors + 1,
          };
        });
        expect(after).toMatchObject({
          version: 2,
          lastStatus: "error",
          consecutiveErrors: 1,
          nextRunAt: 1000,
        });
        expect(after.runningSince).toBeUndefined();
        expect((await store.cron.list()).map((c) => c.jobId)).toEqual(["daily"]);
        expect(await store.cron.delete("daily")).toBe(true);
        expect(await store.cron.get("daily")).toBeUndefined();
      }));
  });

  describe("channel state", () => {
    it("puts, gets, lists by prefix and deletes JSON values per channel account", () =>
      withStore(factory, async (store) => {
        const cs = store.channelState;
        const first = await cs.put("telegram", "default", "offset", { updateId: 41 }, { now: 100 });
        expect(first).toEqual({
          channel: "telegram",
          accountId: "default",
          key: "offset",
          value: { updateId: 41 },
          version: 1,
          updatedAt: 100,
        });
        expect(await cs.get("telegram", "default", "offset", { now: 100 })).toEqual(first);
        const second = await cs.put("telegram", "default", "offset", { updateId: 42 }, { now: 200 });
        expect(second).toMatchObject({ version: 2, value: { updateId: 42 }, updatedAt: 200 });
        await cs.put("telegram", "default", "pair:b", "B");
        await cs.put("telegram", "default", "pair:a", ["A", 1, null, true]);
        await cs.put("telegram", "default", "pairing", 0);
        await cs.put("telegram", "default", "PAIR:c", "upper case is another prefix");
        await cs.put("telegram", "other", "pair:z", "another account");
        await cs.put("slack", "default", "pair:y", "another channel");
        await cs.put("telegram", "default", "pa%r_x", "wildcards are literal");
        const listed = await cs.list("telegram", "default", { prefix: "pair:" });
        expect(listed.map((e) => [e.key, e.value])).toEqual([
          ["pair:a", ["A", 1, null, true]],
          ["pair:b", "B"],
        ]);
        expect((await cs.list("telegram", "default", { prefix: "pa%" })).map((e) => e.key)).toEqual([
          "pa%r_x",
        ]);
        expect((await cs.list("telegram", "default")).map((e) => e.key)).toEqual([
          "PAIR:c",
          "offset",
          "pa%r_x",
          "pair:a",
          "pair:b",
          "pairing",
        ]);
        expect(await cs.delete("telegram", "default", "pair:a")).toBe(true);
        expect(await cs.delete("telegram", "default", "pair:a")).toBe(false);
        expect(await cs.get("telegram", "default", "pair:a")).toBeUndefined();
        expect(await cs.get("telegram", "other", "pair:z")).toMatchObject({ value: "another account" });
      }));

    it("compare-and-set: expectedVersion 0 creates only, n writes only at version n", () =>
      withStore(factory, async (store) => {
        const cs = store.channelState;
        const created = await cs.put("slack", "T1", "k", { n: 1 }, { expectedVersion: 0 });
        expect(created.version).toBe(1);
        await expect(cs.put("slack", "T1", "k", { n: 9 }, { expectedVersion: 0 })).rejects.toThrow(
          SessionConflictError,
        );
        await expect(cs.put("slack", "T1", "k", { n: 9 }, { expectedVersion: 2 })).rejects.toThrow(
          /no longer at version 2/,
        );
        expect((await cs.get("slack", "T1", "k"))?.value).toEqual({ n: 1 });
        expect(await cs.put("slack", "T1", "k", { n: 2 }, { expectedVersion: 1 })).toMatchObject({
          version: 2,
          value: { n: 2 },
        });
        // Concurrent writers that read version 2: exactly one wins.
        const outcomes = await Promise.allSettled(
          Array.from({ length: 4 }, (_unused, i) =>
            cs.put("slack", "T1", "k", { n: 10 + i }, { expectedVersion: 2 }),
          ),
        );
        expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
        expect((await cs.get("slack", "T1", "k"))?.version).toBe(3);
        await expect(cs.put("slack", "T1", "missing", 1, { expectedVersion: 1 })).rejects.toThrow(
          SessionConflictError,
        );
        expect(await cs.delete("slack", "T1", "k", { expectedVersion: 2 })).toBe(false);
        expect(await cs.delete("slack", "T1", "k", { expectedVersion: 3 })).toBe(true);
      }));

    it("expired entries are absent, replaceable with a fresh version, and purged", () =>
      withStore(factory, async (store) => {
        const cs = store.channelState;
        await cs.put("telegram", "default", "code:ABC", { sender: "1" }, { now: 1000, expiresAt: 2000 });
        await cs.put("telegram", "default", "code:DEF", { sender: "2" }, { now: 1000, expiresAt: 5000 });
        await cs.put("telegram", "default", "keep", true, { now: 1000 });
        expect(await cs.get("telegram", "default", "code:ABC", { now: 1999 })).toMatchObject({
          expiresAt: 2000,
        });
        expect(await cs.get("telegram", "default", "code:ABC", { now: 2000 })).toBeUndefined();
        expect(
          (await cs.list("telegram", "default", { prefix: "code:", now: 3000 })).map((e) => e.key),
        ).toEqual(["code:DEF"]);
        // A version read before the expiry no longer matches.
        await expect(
          cs.put("telegram", "default", "code:ABC", {}, { expectedVersion: 1, now: 3000 }),
        ).rejects.toThrow(SessionConflictError);
        const replaced = await cs.put(
          "telegram",
          "default",
          "code:ABC",
          { sender: "3" },
          { expectedVersion: 0, now: 3000 },
        );
        expect(replaced.version).toBe(2);
        expect(replaced.expiresAt).toBeUndefined();
        expect(await cs.purgeExpired({ now: 4000 })).toBe(0);
        expect(await cs.purgeExpired({ now: 6000 })).toBe(1);
        expect((await cs.list("telegram", "default", { now: 6000 })).map((e) => e.key)).toEqual([
          "code:ABC",
          "keep",
        ]);
      }));

    it("rejects bad input with an error naming the field and keeps what is stored", () =>
      withStore(factory, async (store) => {
        const cs = store.channelState;
        await cs.put("telegram", "default", "k", "kept");
        await expect(cs.put("", "default", "k", 1)).rejects.toThrow(/channel must be a non-empty string/);
        await expect(cs.put("telegram", "", "k", 1)).rejects.toThrow(/accountId must be/);
        await expect(cs.get("telegram", "default", "")).rejects.toThrow(/key must be/);
        await expect(cs.put("telegram", "default", "k", undefined)).rejects.toThrow(/JSON-serialisable/);
        await expect(cs.put("telegram", "default", "k", 1n)).rejects.toThrow(/JSON-serialisable/);
        await expect(cs.put("telegram", "default", "k", 1, { expectedVersion: -1 })).rejects.toThrow(
          /expectedVersion/,
        );
        await expect(cs.put("telegram", "default", "k", 1, { expiresAt: Number.NaN })).rejects.toThrow(
          /expiresAt/,
        );
        expect((await cs.get("telegram", "default", "k"))?.value).toBe("kept");
      }));
  });

  describe("migrations", () => {
    it("migrates an empty store to the latest version and records each step once", async () => {
      const fixture = await factory();
      try {
        const first = await fixture.open();
        const schema = await first.schema();
        expect(schema.version).toBe(schema.latestVersion);
        expect(schema.applied.map((m) => m.version)).toEqual(
          Array.from({ length: schema.latestVersion }, (_unused, index) => index + 1),
        );
        await first.close();
        const second = await fixture.open();
        expect((await second.schema()).applied).toEqual(schema.applied);
        await second.close();
      } finally {
        await fixture.dispose();
      }
    });

    it("upgrades a store written with the first schema, keeping its data", async () => {
      const fixture = await factory();
      try {
        if (fixture.seedFirstSchema === undefined) return;
        await fixture.seedFirstSchema();
        const store = await fixture.open();
        const sample = FIRST_SCHEMA_SAMPLE;
        const schema = await store.schema();
        expect(schema.version).toBe(schema.latestVersion);
        expect(schema.applied[0]?.version).toBe(1);
        const session = await store.sessions.get({ agentId: sample.agentId, sessionKey: sample.sessionKey });
        expect(session).toMatchObject({ sessionId: sample.sessionId, meta: sample.meta });
        expect(await store.runs.get(sample.runId)).toMatchObject({
          status: "succeeded",
          provider: "anthropic",
        });
        expect(await store.runs.events(sample.runId)).toEqual(sample.runEvents);
        await load(store, sample.agentId, sample.sessionId);
        const transcript = store.openTranscript(sample.agentId, sample.sessionId);
        expect(ids(transcript.getEntries())).toEqual([...sample.entryIds]);
        expect(transcript.getLeafId()).toBe(sample.leafId);
        expect(ids(transcript.getBranch())).toEqual([...sample.branchToLeaf]);
        transcript.append(messageEntry("after-upgrade", sample.leafId));
        expect(transcript.getLeafId()).toBe("after-upgrade");
        expect(ids(transcript.getBranch())).toEqual([...sample.branchToLeaf, "after-upgrade"]);
        await store.runs.update(sample.runId, { thinkingLevel: "low" });
        await store.auth.update(sample.agentId, "p", (c) => ({ ...c, lastUsed: 1 }));
        expect((await store.runs.get(sample.runId))?.thinkingLevel).toBe("low");
        await store.close();
      } finally {
        await fixture.dispose();
      }
    });

    it("refuses a store from a newer release with an error naming both versions", async () => {
      const fixture = await factory();
      try {
        if (fixture.seedFutureVersion === undefined) return;
        const store = await fixture.open();
        const latest = (await store.schema()).latestVersion;
        await store.sessions.create({ ...ref, sessionId: "s1" });
        await store.close();
        await fixture.seedFutureVersion(latest + 7);
        const failure = await fixture.open().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(StoreVersionError);
        expect(String(failure)).toContain(`schema version ${latest + 7}`);
        expect(String(failure)).toContain(`supports up to version ${latest}`);
      } finally {
        await fixture.dispose();
      }
    });
  });

  runImportConformance(factory);
}

function ids(entries: readonly TranscriptEntry[]): string[] {
  return entries.map((entry) => entry.id);
}

function pick<T>(items: readonly T[], index: number): T {
  return items[index % items.length] as T;
}

/** Re-exported for backends' own tests. */
export type { Transcript };
