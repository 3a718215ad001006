import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  clearTranscriptCache,
  openSessionStore,
  readTranscriptContext,
  type SqliteSessionStore,
  type Transcript,
  type TranscriptEntry,
} from "@agent-kernel/session-store";
import type { AssistantMessage, UserMessage } from "@earendil-works/pi-ai";
import { type FileEntry, type SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdsContextOnly, latestOnBranch, lazyHistoryManager } from "./lazy-history.ts";
import { bindPiSessionManager, newTranscriptHeader, type PiSessionBinding } from "./pi-session-manager.ts";

const AGENT = "main";
const CWD = "/work";
let stateDir: string;
let store: SqliteSessionStore;
let sessions = 0;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "lazy-history-"));
  store = await openSessionStore({ stateDir });
});
afterAll(async () => {
  await store.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const user = (text: string): UserMessage => ({
  role: "user",
  content: [{ type: "text", text }],
  timestamp: 1,
});
const assistant = (text: string, model: string): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "faux",
  provider: "faux",
  model,
  usage: {
    input: 1,
    output: 1,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 2,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  },
  stopReason: "stop",
  timestamp: 2,
});

/** One step on a pi manager; numbers pick among what exists when the step runs. */
type Step =
  | { kind: "user" | "assistant" | "model" | "thinking" | "custom"; n: number }
  | { kind: "compaction" | "branch" | "label" | "edit"; pick: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("user" as const), n: fc.nat(3) }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("assistant" as const), n: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("model" as const), n: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("thinking" as const), n: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("custom" as const), n: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("compaction" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("branch" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("label" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("edit" as const), pick: fc.nat() }) },
);

const THINKING = ["off", "low", "medium", "high"] as const;

/** Applies a step as pi's AgentSession would (pi's own append calls); steps that do not apply are skipped. */
function apply(manager: SessionManager, s: Step, everyId: () => string[]): void {
  switch (s.kind) {
    case "user":
      manager.appendMessage(user(`question ${s.n}`));
      return;
    case "assistant":
      manager.appendMessage(assistant(`answer ${s.n}`, `model-${s.n}`));
      return;
    case "model":
      manager.appendModelChange("faux", `model-${s.n}`);
      return;
    case "thinking":
      manager.appendThinkingLevelChange(THINKING[s.n] ?? "off");
      return;
    case "custom":
      manager.appendCustomEntry("bench-record", { n: s.n });
      return;
    case "compaction": {
      const branch = manager.getBranch();
      if (branch.length === 0) return;
      // Keep from some entry of the branch (pi keeps a recent tail), or nothing (the compaction itself).
      const kept = s.pick % (branch.length + 1);
      const keptId = branch[kept]?.id;
      if (keptId === undefined) manager.appendCompaction(`summary ${s.pick}`, undefined as never, 1000);
      else manager.appendCompaction(`summary ${s.pick}`, keptId, 1000);
      return;
    }
    case "branch": {
      const ids = everyId();
      const id = ids[s.pick % Math.max(ids.length, 1)];
      if (id !== undefined) manager.branch(id);
      return;
    }
    case "label": {
      const ids = everyId();
      const id = ids[s.pick % Math.max(ids.length, 1)];
      if (id !== undefined) manager.appendLabelChange(id, `label ${s.pick}`);
      return;
    }
    case "edit": {
      const editable = manager
        .getBranch()
        .filter((entry) => entry.type === "message" && entry.message.role !== "system");
      const target = editable[s.pick % Math.max(editable.length, 1)];
      if (target !== undefined) manager.appendContextEdit(target.id, { content: `edited ${s.pick}` });
      return;
    }
  }
}

/** pi's own manager over everything the transcript holds, on its leaf: the reference answers. */
function reference(transcript: Transcript): SessionManager {
  const header = transcript.getHeader() as unknown as FileEntry;
  const entries = transcript.getEntries() as unknown as SessionEntry[];
  const manager = SessionManager.inMemory(CWD, undefined, [header, ...entries]);
  const leaf = transcript.getLeafId();
  if (leaf === null) manager.resetLeaf();
  else manager.branch(leaf);
  return manager;
}

/** A transcript written by pi's manager from `steps`, stored in SQLite; nothing of it cached in this process. */
function storedSession(steps: readonly Step[]): ReturnType<SqliteSessionStore["openTranscript"]> {
  sessions += 1;
  const sessionId = `s${sessions}`;
  const writer = SessionManager.inMemory(CWD);
  for (const s of steps) apply(writer, s, () => writer.getEntries().map((entry) => entry.id));
  const transcript = store.openTranscript(AGENT, sessionId, { header: newTranscriptHeader(sessionId, CWD) });
  const entries = writer.getEntries() as unknown as TranscriptEntry[];
  if (entries.length > 0) transcript.appendMany(entries);
  transcript.setLeaf(writer.getLeafId());
  clearTranscriptCache();
  return transcript;
}

/** Every answer pi's AgentSession asks of a manager, as JSON (a lazily read entry compares by content). */
function answers(manager: SessionManager) {
  const json = (value: unknown) =>
    value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
  const leaf = manager.getLeafId();
  return {
    leaf,
    context: json(manager.buildSessionContext()),
    contextEntries: json(manager.buildContextEntries()),
    branch: json(manager.getBranch()),
    latestThinking: json(latestOnBranch(manager, "thinking_level_change")),
    latestModel: json(latestOnBranch(manager, "model_change")),
    leafEntry: json(leaf === null ? undefined : manager.getEntry(leaf)),
  };
}

function bind(transcript: Transcript): PiSessionBinding {
  return bindPiSessionManager(transcript, { cwd: CWD });
}

const sessionSteps = fc.array(step, { minLength: 0, maxLength: 60 });

describe("a manager holding the context only (lazy-history.ts)", () => {
  it("gives the context, branch and settings pi gives over the whole transcript (random trees with compactions and branches)", () => {
    fc.assert(
      fc.property(sessionSteps, (steps) => {
        const transcript = storedSession(steps);
        const binding = bind(transcript);
        expect(answers(binding.sessionManager)).toEqual(answers(reference(transcript)));
        // A turn's path (the context, the settings, the branch) reads no other branch.
        expect(holdsContextOnly(binding.sessionManager)).toBe(true);
        // The whole tree, read on demand, is pi's.
        const whole = reference(transcript);
        expect(JSON.stringify(binding.sessionManager.getEntries())).toBe(JSON.stringify(whole.getEntries()));
        expect(JSON.stringify(binding.sessionManager.getTree())).toBe(JSON.stringify(whole.getTree()));
        expect(answers(binding.sessionManager)).toEqual(answers(whole));
      }),
      { numRuns: 150 },
    );
  });

  it("keeps answering as pi after appends, compactions and leaf moves through the binding (also to entries before the compaction)", () => {
    fc.assert(
      fc.property(sessionSteps, fc.array(step, { minLength: 1, maxLength: 25 }), (before, after) => {
        const transcript = storedSession(before);
        const binding = bind(transcript);
        const manager = binding.sessionManager;
        const stored = () => transcript.getEntries().map((entry) => entry.id);
        for (const s of after) {
          apply(manager, s, stored);
          expect(answers(manager)).toEqual(answers(reference(transcript)));
        }
        expect(binding.isInSync()).toBe(true);
        // Reopened in a process that has nothing cached: the same answers from the store.
        clearTranscriptCache();
        expect(answers(bind(transcript).sessionManager)).toEqual(answers(manager));
      }),
      { numRuns: 100 },
    );
  });

  it("a turn's path on a compacted session reads the tail only; the history is read when asked for", () => {
    const steps: Step[] = [{ kind: "thinking", n: 2 }];
    for (let n = 0; n < 200; n++) steps.push({ kind: "user", n: 0 }, { kind: "assistant", n: 1 });
    const transcript = storedSession(steps);
    const writer = reference(transcript);
    const kept = writer.getBranch().at(-20)?.id;
    writer.appendCompaction("summary", kept ?? "", 1000);
    writer.appendMessage(user("after the compaction"));
    const compacted = storedSession([]);
    compacted.appendMany(writer.getEntries() as unknown as TranscriptEntry[]);
    clearTranscriptCache();

    const binding = bind(compacted);
    const manager = binding.sessionManager;
    const piInternals = manager as unknown as { fileEntries: unknown[] };
    // header + the 20 kept entries + the compaction + the message after it
    expect(piInternals.fileEntries).toHaveLength(23);
    expect(binding.storedThinkingLevel).toBe("medium");
    expect(manager.buildSessionContext().thinkingLevel).toBe("medium");
    expect(manager.getBranch()).toHaveLength(403);
    expect(manager.getBranch()[0]?.type).toBe("thinking_level_change");
    manager.appendMessage(user("and a new turn"));
    expect(compacted.count()).toBe(404);
    expect(holdsContextOnly(manager)).toBe(true);

    // Branching to an entry the compaction summarised loads what it needs, then goes on as pi.
    const early = manager.getBranch()[10]?.id ?? "";
    manager.branch(early);
    expect(holdsContextOnly(manager)).toBe(false);
    expect(compacted.getLeafId()).toBe(early);
    manager.appendMessage(user("a new branch"));
    expect(answers(manager)).toEqual(answers(reference(compacted)));
  });

  it("a first read in a fresh process reads no history once the store knows the settings before the start", () => {
    const steps: Step[] = [{ kind: "thinking", n: 2 }];
    for (let n = 0; n < 100; n++) steps.push({ kind: "user", n: 0 }, { kind: "assistant", n: 1 });
    const writer = reference(storedSession(steps));
    writer.appendCompaction("summary", writer.getBranch().at(-20)?.id ?? "", 1000);
    writer.appendMessage(user("after the compaction"));
    const compacted = storedSession([]);
    compacted.appendMany(writer.getEntries() as unknown as TranscriptEntry[]);
    clearTranscriptCache();
    // The batch was stored with nothing cached: the first open reads the history once and the store keeps
    // what it found (the settings before the context start).
    expect(bind(compacted).storedThinkingLevel).toBe("medium");

    clearTranscriptCache();
    const context = readTranscriptContext(compacted);
    if (context === undefined) throw new Error("no context read");
    const untouchable = (): never => {
      throw new Error("the history was read");
    };
    const noHistory = {
      ...context,
      omitted: {
        get ids() {
          return untouchable();
        },
        get parentIds() {
          return untouchable();
        },
        get types() {
          return untouchable();
        },
      },
    };
    const manager = lazyHistoryManager(
      CWD,
      compacted.getHeader() as unknown as FileEntry,
      compacted,
      noHistory,
    );
    const whole = reference(compacted);
    expect(manager.buildSessionContext()).toEqual(whole.buildSessionContext());
    expect(latestOnBranch(manager, "thinking_level_change")?.id).toBe(
      latestOnBranch(whole, "thinking_level_change")?.id,
    );
    expect(latestOnBranch(manager, "model_change")).toBeUndefined();
    manager.appendMessage(user("a new turn"));
    whole.appendMessage(user("a new turn"));
    expect(manager.buildSessionContext().messages).toHaveLength(whole.buildSessionContext().messages.length);
    expect(() => manager.getBranch()).toThrow("the history was read");
  });

  it("a warm session's lookups look at the entries appended since the last one, not the whole tail again", () => {
    const steps: Step[] = [{ kind: "thinking", n: 2 }];
    for (let n = 0; n < 50; n++) steps.push({ kind: "user", n: 0 }, { kind: "assistant", n: 1 });
    const transcript = storedSession(steps);
    const manager = bind(transcript).sessionManager;
    const firstMessage = transcript.getEntries().find((entry) => entry.type === "message");
    let looked = 0;
    const isFirstMessage = (entry: SessionEntry): boolean => {
      looked += 1;
      return entry.id === firstMessage?.id;
    };
    expect(latestOnBranch(manager, "message", isFirstMessage)?.id).toBe(firstMessage?.id);
    expect(looked).toBeGreaterThanOrEqual(100);
    // A turn's two messages, then the next turn's lookup: only they are looked at.
    manager.appendMessage(user("again"));
    manager.appendMessage(assistant("yes", "m1"));
    looked = 0;
    expect(latestOnBranch(manager, "message", isFirstMessage)?.id).toBe(firstMessage?.id);
    expect(looked).toBe(2);
    const first = latestOnBranch(manager, "thinking_level_change");
    expect(first?.type).toBe("thinking_level_change");
    // A new one appended is found (the memo does not hide it).
    manager.appendThinkingLevelChange("high");
    const latest = latestOnBranch(manager, "thinking_level_change");
    expect(latest?.type === "thinking_level_change" && latest.thinkingLevel).toBe("high");
    expect(latestOnBranch(manager, "thinking_level_change")?.id).toBe(
      latestOnBranch(reference(transcript), "thinking_level_change")?.id,
    );
  });

  it("keeps every memo of up to eight matchers of one type (the bound drops memos only for a ninth)", () => {
    const steps: Step[] = [];
    for (let n = 0; n < 30; n++) steps.push({ kind: "user", n: 0 }, { kind: "assistant", n: 1 });
    const transcript = storedSession(steps);
    const manager = bind(transcript).sessionManager;
    const firstMessage = transcript.getEntries().find((entry) => entry.type === "message");
    let looked = 0;
    const matchers = Array.from({ length: 8 }, () => (entry: SessionEntry): boolean => {
      looked += 1;
      return entry.id === firstMessage?.id;
    });
    for (const matcher of matchers)
      expect(latestOnBranch(manager, "message", matcher)?.id).toBe(firstMessage?.id);
    manager.appendMessage(user("again"));
    looked = 0;
    for (const matcher of matchers)
      expect(latestOnBranch(manager, "message", matcher)?.id).toBe(firstMessage?.id);
    expect(looked).toBe(8);
  });
});
