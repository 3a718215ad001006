import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionStore, type SqliteSessionStore, type TranscriptEntry } from "@agent-kernel/session-store";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { buildSessionContext, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hermeticRuntime, hermeticSession, SYSTEM_PROMPT } from "../../test/session-manager/hermetic.ts";
import { bindPiSessionManager, openPiSessionManager, thinkingLevelForCreate } from "./pi-session-manager.ts";

const CHILD_SCRIPT = join(import.meta.dirname, "../../test/session-manager/continue-session.ts");
const AGENT = "main";

let stateDir: string;
let store: SqliteSessionStore;

beforeEach(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "pi-session-manager-"));
  store = await openSessionStore({ stateDir });
});
afterEach(async () => {
  await store.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const roleOf = (entry: TranscriptEntry): string =>
  entry.type === "message" ? `message:${(entry.message as { role: string }).role}` : entry.type;

describe("the pi SessionManager adapter, end to end", () => {
  it("persists a real turn with a tool call and a compaction; a new process reopens it from SQLite and continues", async () => {
    const sessionId = "e2e-session";
    const cwd = join(stateDir, "workspace");
    const binding = openPiSessionManager(store, { agentId: AGENT, sessionId, cwd });
    expect(binding.isNew).toBe(true);
    const runtime = await hermeticRuntime();
    const session = await hermeticSession(runtime, {
      sessionManager: binding.sessionManager,
      cwd,
      agentDir: join(stateDir, "pi-agent-dir-unused"),
      thinkingLevel: thinkingLevelForCreate(binding, "low"),
    });

    runtime.faux.setResponses([
      fauxAssistantMessage(
        [fauxText("Let me check."), fauxToolCall("get_weather", { city: "Paris" }, { id: "c1" })],
        {
          stopReason: "toolUse",
        },
      ),
      fauxAssistantMessage("Paris is sunny, 21C."),
    ]);
    await session.prompt("What is the weather in Paris?");
    expect(session.getLastAssistantText()).toBe("Paris is sunny, 21C.");

    runtime.faux.setResponses([fauxAssistantMessage("## Goal\nWeather in Paris: sunny, 21C.")]);
    const compaction = await session.compact();
    session.dispose();

    // Everything pi appended is in SQLite, in order, as one chain, with the leaf on the compaction.
    const stored = store.openTranscript(AGENT, sessionId);
    const firstRun = stored.getEntries();
    expect(firstRun.map(roleOf)).toEqual([
      "model_change",
      "thinking_level_change",
      "message:system",
      "message:user",
      "message:assistant",
      "message:toolResult",
      "message:assistant",
      "compaction",
    ]);
    expect(firstRun.map((entry) => entry.parentId)).toEqual([
      null,
      ...firstRun.slice(0, -1).map((entry) => entry.id),
    ]);
    expect(firstRun).toEqual(binding.sessionManager.getEntries());
    const compactionEntry = firstRun.at(-1);
    expect(compactionEntry).toMatchObject({
      type: "compaction",
      firstKeptEntryId: compaction.firstKeptEntryId,
    });
    expect(stored.getLeafId()).toBe(compactionEntry?.id);
    expect(stored.getHeader()).toMatchObject({ type: "session", version: 3, id: sessionId, cwd });

    // A new process: only the state dir is shared. Its HOME is an empty folder that must stay empty (no ~/.pi).
    const home = join(stateDir, "home");
    mkdirSync(home);
    const child = spawnSync(
      process.execPath,
      ["--conditions=@agent-kernel/source", "--no-warnings", CHILD_SCRIPT, stateDir, AGENT, sessionId, cwd],
      {
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, HOME: home, PI_OFFLINE: "1", PI_TELEMETRY: "0" },
      },
    );
    expect(child.stderr).toBe("");
    expect(child.status).toBe(0);
    expect(readdirSync(home)).toEqual([]);
    const report = JSON.parse(child.stdout) as {
      isNew: boolean;
      storedThinkingLevel: string | null;
      agentThinkingLevel: string;
      systemPrompt: string;
      contextBeforeTurn: string[];
      seenByModel: { role: string; text: string }[];
      answer: string | null;
      leafId: string;
    };
    expect(report.isNew).toBe(false);
    // Restart semantics: the level comes back from the transcript, and agent and transcript agree.
    expect(report.storedThinkingLevel).toBe("low");
    expect(report.agentThinkingLevel).toBe("low");
    expect(report.systemPrompt).toContain(SYSTEM_PROMPT);
    // The context after the restart: system, the compaction summary, the kept assistant message.
    expect(report.contextBeforeTurn).toEqual(["system", "compactionSummary", "assistant"]);
    expect(report.seenByModel.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
    ]);
    expect(report.seenByModel[1]?.text).toContain("Weather in Paris: sunny, 21C.");
    expect(report.seenByModel[2]?.text).toBe("Paris is sunny, 21C.");
    expect(report.seenByModel[3]?.text).toBe("And tomorrow?");
    expect(report.answer).toBe("Continuing after the restart.");

    // The parent sees the continued tree: the new turn hangs under the compaction, nothing else changed.
    const after = store.openTranscript(AGENT, sessionId);
    const entries = after.getEntries();
    expect(entries.slice(0, firstRun.length)).toEqual(firstRun);
    const added = entries.slice(firstRun.length);
    expect(added.map(roleOf)).toEqual(["message:user", "message:assistant"]);
    expect(added[0]?.parentId).toBe(compactionEntry?.id);
    expect(added[1]?.parentId).toBe(added[0]?.id);
    expect(after.getLeafId()).toBe(added[1]?.id);
    expect(report.leafId).toBe(added[1]?.id);
    expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length);
    expect(after.getBranch().map((entry) => entry.id)).toEqual(entries.map((entry) => entry.id));
    // What a third opening would send is what pi builds from the stored branch.
    const reopened = bindPiSessionManager(after);
    expect(reopened.sessionManager.buildSessionContext()).toEqual(
      buildSessionContext(after.getBranch() as unknown as SessionEntry[]),
    );
  }, 90_000);
});

describe("the pi SessionManager adapter", () => {
  const cwd = "/workspace";

  it("stores leaf moves (branch, resetLeaf) and reopens on the stored leaf", () => {
    const { sessionManager } = openPiSessionManager(store, { agentId: AGENT, sessionId: "leaf", cwd });
    const first = sessionManager.appendMessage({ role: "user", content: "one", timestamp: 1 });
    sessionManager.appendMessage({ role: "user", content: "two", timestamp: 2 });
    sessionManager.branch(first);
    expect(store.openTranscript(AGENT, "leaf").getLeafId()).toBe(first);
    const reopened = openPiSessionManager(store, { agentId: AGENT, sessionId: "leaf", cwd }).sessionManager;
    expect(reopened.getLeafId()).toBe(first);
    const sibling = reopened.appendMessage({ role: "user", content: "two again", timestamp: 3 });
    expect(
      store
        .openTranscript(AGENT, "leaf")
        .getChildren(first)
        .map((entry) => entry.id),
    ).toHaveLength(2);
    expect(store.openTranscript(AGENT, "leaf").getLeafId()).toBe(sibling);

    reopened.resetLeaf();
    expect(store.openTranscript(AGENT, "leaf").getLeafId()).toBeNull();
    const again = openPiSessionManager(store, { agentId: AGENT, sessionId: "leaf", cwd }).sessionManager;
    expect(again.getLeafId()).toBeNull();
    expect(again.buildSessionContext().messages).toEqual([]);
  });

  it("stores branchWithSummary, labels, names and context edits verbatim", () => {
    const { sessionManager } = openPiSessionManager(store, { agentId: AGENT, sessionId: "kinds", cwd });
    const user = sessionManager.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    sessionManager.appendLabelChange(user, "start");
    sessionManager.appendSessionInfo("named");
    sessionManager.appendContextEdit(user, { content: "hello (edited)" });
    sessionManager.branchWithSummary(user, "the abandoned path");
    const stored = store.openTranscript(AGENT, "kinds");
    expect(stored.getEntries()).toEqual(sessionManager.getEntries());
    expect(stored.getEntries().map((entry) => entry.type)).toEqual([
      "message",
      "label",
      "session_info",
      "context_edit",
      "branch_summary",
    ]);
    expect(stored.getLeafId()).toBe(sessionManager.getLeafId());
  });

  it("refuses the calls that would swap the session without storing it", () => {
    const { sessionManager } = openPiSessionManager(store, { agentId: AGENT, sessionId: "swap", cwd });
    const id = sessionManager.appendMessage({ role: "user", content: "x", timestamp: 1 });
    expect(() => sessionManager.createBranchedSession(id)).toThrow(
      /createBranchedSession\(\) would swap the session/,
    );
    expect(() => sessionManager.newSession()).toThrow(/newSession\(\)/);
    expect(() => sessionManager.setSessionFile("/tmp/x.jsonl")).toThrow(/setSessionFile\(\)/);
    expect(sessionManager.getSessionId()).toBe("swap");
  });

  it("passes the requested thinking level only while the transcript records none", () => {
    const binding = openPiSessionManager(store, { agentId: AGENT, sessionId: "levels", cwd });
    expect(thinkingLevelForCreate(binding, "high")).toBe("high");
    binding.sessionManager.appendThinkingLevelChange("medium");
    const reopened = openPiSessionManager(store, { agentId: AGENT, sessionId: "levels", cwd });
    expect(reopened.storedThinkingLevel).toBe("medium");
    expect(thinkingLevelForCreate(reopened, "high")).toBeUndefined();
  });

  it("stops writing after a failed store write instead of diverging from the store", async () => {
    const { sessionManager } = openPiSessionManager(store, { agentId: AGENT, sessionId: "fail", cwd });
    sessionManager.appendMessage({ role: "user", content: "stored", timestamp: 1 });
    await store.close();
    expect(() => sessionManager.appendMessage({ role: "user", content: "lost", timestamp: 2 })).toThrow(
      /could not store entry/,
    );
    expect(() => sessionManager.appendMessage({ role: "user", content: "later", timestamp: 3 })).toThrow(
      /an earlier transcript write failed; reopen the session/,
    );
    store = await openSessionStore({ stateDir });
    const entries = store.openTranscript(AGENT, "fail").getEntries();
    expect(entries.map((entry) => (entry.message as { content: string }).content)).toEqual(["stored"]);
  });
});

describe("deferred writes", () => {
  const cwd = "/workspace";
  const contents = (entries: readonly TranscriptEntry[]) =>
    entries.map((entry) => (entry.message as { content: string }).content);

  it("holds appended entries until a flush stores them all; out of sync while any is held", () => {
    const binding = openPiSessionManager(store, { agentId: AGENT, sessionId: "held", cwd });
    const { sessionManager } = binding;
    sessionManager.appendMessage({ role: "user", content: "before", timestamp: 1 });
    binding.deferWrites();
    sessionManager.appendMessage({ role: "user", content: "one", timestamp: 2 });
    sessionManager.appendMessage({ role: "user", content: "two", timestamp: 3 });
    expect(contents(store.openTranscript(AGENT, "held").getEntries())).toEqual(["before"]);
    expect(binding.isInSync()).toBe(false);
    expect(binding.storedCount()).toBe(1);

    binding.flushWrites();
    const stored = store.openTranscript(AGENT, "held");
    expect(stored.getEntries()).toEqual(sessionManager.getEntries());
    expect(stored.getLeafId()).toBe(sessionManager.getLeafId());
    expect(binding.isInSync()).toBe(true);
    expect(binding.storedCount()).toBe(3);

    // Still deferring after a flush; `writeThrough` stores what is held and goes back to storing at once.
    sessionManager.appendMessage({ role: "user", content: "three", timestamp: 4 });
    expect(store.openTranscript(AGENT, "held").count()).toBe(3);
    binding.writeThrough();
    sessionManager.appendMessage({ role: "user", content: "four", timestamp: 5 });
    expect(contents(store.openTranscript(AGENT, "held").getEntries())).toEqual([
      "before",
      "one",
      "two",
      "three",
      "four",
    ]);
    expect(binding.isInSync()).toBe(true);
  });

  it("a leaf move stores the held entries first (its target must be stored)", () => {
    const binding = openPiSessionManager(store, { agentId: AGENT, sessionId: "held-leaf", cwd });
    binding.deferWrites();
    const first = binding.sessionManager.appendMessage({ role: "user", content: "one", timestamp: 1 });
    binding.sessionManager.appendMessage({ role: "user", content: "two", timestamp: 2 });
    binding.sessionManager.branch(first);
    const stored = store.openTranscript(AGENT, "held-leaf");
    expect(contents(stored.getEntries())).toEqual(["one", "two"]);
    expect(stored.getLeafId()).toBe(first);
    binding.sessionManager.resetLeaf();
    expect(store.openTranscript(AGENT, "held-leaf").getLeafId()).toBeNull();
    expect(binding.isInSync()).toBe(true);
  });

  it("a refused flush fails the mirror: nothing of the batch is stored and later writes are refused", async () => {
    const binding = openPiSessionManager(store, { agentId: AGENT, sessionId: "held-fail", cwd });
    binding.sessionManager.appendMessage({ role: "user", content: "stored", timestamp: 1 });
    binding.deferWrites();
    binding.sessionManager.appendMessage({ role: "user", content: "lost", timestamp: 2 });
    binding.sessionManager.appendMessage({ role: "user", content: "lost too", timestamp: 3 });
    await store.close();
    expect(() => binding.flushWrites()).toThrow(
      /could not store 2 entries from entry [0-9a-f]+ \(message\) on/,
    );
    expect(binding.isInSync()).toBe(false);
    expect(() => binding.sessionManager.appendMessage({ role: "user", content: "x", timestamp: 4 })).toThrow(
      /an earlier transcript write failed; reopen the session/,
    );
    store = await openSessionStore({ stateDir });
    expect(contents(store.openTranscript(AGENT, "held-fail").getEntries())).toEqual(["stored"]);
  });
});
