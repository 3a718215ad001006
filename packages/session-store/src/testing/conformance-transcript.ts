// Part of the session-store conformance suite (see conformance.ts). Owns: the transcript tree and branches
// (including a property test against a model). Does not own: the other parts of the suite, the shared fixture
// helpers (conformance-kit.ts) or any backend's set-up.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TranscriptConflictError, TranscriptNotFoundError } from "../errors.ts";
import type { TranscriptEntry } from "../transcript.ts";
import {
  header,
  ids,
  load,
  messageEntry,
  pick,
  type SessionStoreFactory,
  withStore,
} from "./conformance-kit.ts";

/** Registers the conformance tests for the transcript tree and branches (including a property test against a model). */
export function describeTranscriptConformance(factory: SessionStoreFactory): void {
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
}
