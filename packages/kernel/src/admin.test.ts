// The admin facades, command-session rules and replay over a real store filled by real turns (pi's faux
// provider through the real executor).
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { createKernelHarness, type KernelHarness } from "../test/harness.ts";
import { interpretRunEvents, listRuns, listSessions, runDoctor, showRun, showSession } from "./admin.ts";
import { CommandSessionError, persistCommandSettings, resolveCommandSession } from "./command-session.ts";
import { replayRun } from "./replay.ts";

let h: KernelHarness;
afterEach(async () => {
  await h?.close();
});

async function toolTurn(harness: KernelHarness, prompt: string) {
  harness.model
    .on(prompt, () =>
      fauxAssistantMessage(
        [fauxText("Reading."), fauxToolCall("read", { path: "in.txt" }, { id: "call_1" })],
        {
          stopReason: "toolUse",
        },
      ),
    )
    .on(prompt, () =>
      fauxAssistantMessage([fauxToolCall("write", { path: "out.txt", content: "done" }, { id: "call_1" })], {
        stopReason: "toolUse",
      }),
    )
    .on(prompt, () => fauxAssistantMessage("Finished."));
  const prepared = await harness.kernel.prepareSession({ sessionKey: "work" });
  return harness.kernel.executeTurn(prepared, { prompt });
}

describe("admin facades", () => {
  it("read a run back into attempts, replies and tool calls, even when tool-call ids repeat", async () => {
    h = await createKernelHarness();
    writeFileSync(join(h.workspaceDir, "in.txt"), "input");
    const outcome = await toolTurn(h, "go");
    expect(outcome.status).toBe("ok");
    const report = await showRun(h.store, outcome.runId);
    expect(report?.decisions?.phase).toBe("prepared");
    expect(report?.attempts).toMatchObject([
      { attempt: 1, provider: "faux", model: "faux-1", outcome: "ok" },
    ]);
    expect(report?.assistantMessages.map((m) => m.stopReason)).toEqual(["toolUse", "toolUse", "stop"]);
    expect(report?.assistantMessages[1]?.toolCalls).toEqual([
      { id: "call_1", name: "write", args: { path: "out.txt", content: "done" } },
    ]);
    expect(report?.toolCalls).toMatchObject([
      { name: "read", args: { path: "in.txt" }, isError: false, text: "input" },
      { name: "write", args: { path: "out.txt", content: "done" }, isError: false },
    ]);
    // The same reading from coalesced rows (turn-pipeline's other storage mode).
    const coalesced = interpretRunEvents([
      { seq: 1, ts: 1, stream: "assistant", data: { type: "message_start" } },
      { seq: 2, ts: 1, stream: "assistant", data: { type: "text", text: "Hi there", deltas: 2 } },
      { seq: 4, ts: 1, stream: "assistant", data: { type: "message_end", stopReason: "stop" } },
    ]);
    expect(coalesced.assistantMessages).toEqual([
      { stopReason: "stop", text: "Hi there", thinking: "", toolCalls: [] },
    ]);

    expect((await listSessions(h.store, h.config)).map((s) => s.sessionKey)).toEqual(["agent:main:work"]);
    expect((await listRuns(h.store, h.config)).map((r) => r.runId)).toEqual([outcome.runId]);
    const details = await showSession(h.store, h.config, { key: "work" });
    expect(details?.messages.filter((m) => m.role === "user")).toEqual([{ role: "user", text: "go" }]);
    expect(await showSession(h.store, h.config, { key: "nope" })).toBeUndefined();
    expect(await showRun(h.store, "nope")).toBeUndefined();
  });

  it("the doctor reports a clean store and rejects a path that is not a legacy file", async () => {
    h = await createKernelHarness();
    await toolTurn(h, "go");
    const report = await runDoctor(h.store, h.config);
    expect(report.problems).toEqual([]);
    expect(report.checked).toMatchObject({ sessions: 1, transcripts: 1, runs: 1 });
    await expect(runDoctor(h.store, h.config, { legacyPaths: [join(h.root, "x.txt")] })).rejects.toThrow(
      /does not exist/,
    );
  });

  it("the doctor reports the append journal of a process that died before folding it", async () => {
    h = await createKernelHarness();
    await toolTurn(h, "go");
    const store = h.store as SqliteSessionStore;
    const [session] = await store.sessions.list("main");
    const transcript = store.openTranscript("main", session?.sessionId ?? "");
    const leaf = transcript.getLeafId();
    // What a killed process leaves: its journal, named for an owner that is gone (no pid reaches 2^31 - 2 on Linux).
    const entry = { type: "custom", id: "after-crash", parentId: leaf, timestamp: new Date(0).toISOString() };
    const journal = join(
      dirname(store.agentDatabasePath("main")),
      `agent.sqlite-appends+${encodeURIComponent(hostname())}+2147483646+gone.jsonl`,
    );
    writeFileSync(journal, `{"s":${JSON.stringify(session?.sessionId)},"e":${JSON.stringify(entry)}}\n{"s":`);
    const reopened = await openSessionStore({ stateDir: store.stateDir });
    try {
      const report = await runDoctor(reopened, h.config);
      expect(report.recoveredAppends).toEqual([
        { file: journal, stored: 1, alreadyStored: 0, problems: [{ line: 2, problem: expect.any(String) }] },
      ]);
      expect(report.problems).toEqual([]);
      expect(reopened.openTranscript("main", session?.sessionId ?? "").getLeafId()).toBe("after-crash");
    } finally {
      await reopened.close();
    }
  });
});

describe("replayRun", () => {
  it("replays a stored run offline with no divergence, and reports one when a tool result changed", async () => {
    h = await createKernelHarness();
    writeFileSync(join(h.workspaceDir, "in.txt"), "input");
    const outcome = await toolTurn(h, "go");
    const same = await replayRun({ store: h.store, config: h.config, runId: outcome.runId });
    expect(same?.prompt).toBe("go");
    expect(same?.divergences).toEqual([]);
    expect(same?.replayed.toolCalls.map((call) => call.name)).toEqual(["read", "write"]);

    writeFileSync(join(h.workspaceDir, "in.txt"), "changed");
    const changed = await replayRun({ store: h.store, config: h.config, runId: outcome.runId });
    expect(changed?.divergences).toEqual(['tool call 1 (read): result recorded "input", replay "changed"']);
    expect(await replayRun({ store: h.store, config: h.config, runId: "nope" })).toBeUndefined();
  });
});

describe("command session rules", () => {
  it("resolve --agent/--to/--session-id and persist --thinking (off clears it)", async () => {
    h = await createKernelHarness({ config: { session: { dmScope: "per-peer" } } });
    const deps = { config: h.config, store: h.store, paths: { env: {}, homeDir: h.root, cwd: h.root } };
    expect(await resolveCommandSession(deps, { to: "Alice" })).toMatchObject({
      agentId: "main",
      sessionKey: "agent:main:direct:alice",
      messageContext: { channel: "cli", to: "Alice" },
    });
    await expect(resolveCommandSession(deps, { agentId: "nobody" })).rejects.toThrow(CommandSessionError);
    const session = await resolveCommandSession(deps, { sessionKey: "k" });
    await persistCommandSettings(deps, session, { thinking: "high" });
    expect(
      (await h.store.sessions.get({ agentId: "main", sessionKey: "agent:main:k" }))?.meta.thinkingLevel,
    ).toBe("high");
    await persistCommandSettings(deps, session, { thinking: "off" });
    expect(
      (await h.store.sessions.get({ agentId: "main", sessionKey: "agent:main:k" }))?.meta.thinkingLevel,
    ).toBeUndefined();
    await expect(persistCommandSettings(deps, session, { thinking: "loud" })).rejects.toThrow(
      /not a thinking level/,
    );
    const row = await h.store.sessions.get({ agentId: "main", sessionKey: "agent:main:k" });
    expect(await resolveCommandSession(deps, { sessionId: row?.sessionId })).toMatchObject({
      sessionKey: "agent:main:k",
    });
  });
});
