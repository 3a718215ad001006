// The executor when its store fails it (a full disk, a read-only file): the transcript write of the reply
// refused ends the turn with reason `storage`, the run stored as failed with the file in its message and the
// reply kept in the result (it was produced, and paid for); a run record that cannot be finished throws
// `TurnNotRecordedError` carrying that result. The refusals are a real `StorageFailure` thrown where the store
// would throw it (the harness store, wrapped); the real conditions run in apps/agent's storage-faults tests.
import { type SessionStore, StorageFailure, type Transcript } from "@agent-kernel/session-store";
import { type FauxProviderHandle, fauxAssistantMessage, fauxProvider } from "@earendil-works/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { executeTurn, STORAGE_REASON, TurnNotRecordedError } from "../../src/executor/index.ts";
import { AGENT, createHarness, fauxConfig, type Harness } from "./harness.ts";

let faux: FauxProviderHandle;
let harness: Harness;

beforeEach(async () => {
  faux = fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1", reasoning: true, input: ["text"], contextWindow: 200_000, maxTokens: 8192 }],
    tokenSize: { min: 4, max: 4 },
  });
  harness = await createHarness({ config: fauxConfig(), nativeProviders: [faux.provider] });
});
afterEach(async () => {
  await harness.close();
});

const full = (path: string) =>
  new StorageFailure({
    kind: "disk_full",
    path,
    code: "SQLITE_FULL",
    problem: `the disk holding ${path} is full (SQLITE_FULL)`,
    hint: "free space on it and run the command again",
  });

/** The harness store whose transcripts refuse their `n`th batch write (1-based) and whose finish may refuse. */
function failingStore(
  store: SessionStore,
  options: { refuseWrite?: number; refuseFinish?: boolean },
): SessionStore {
  let writes = 0;
  const bound = <T extends object>(target: T, property: string | symbol): unknown => {
    const value: unknown = Reflect.get(target, property, target);
    return typeof value === "function" ? value.bind(target) : value;
  };
  const transcriptOf = (transcript: Transcript): Transcript =>
    new Proxy(transcript, {
      get(target, property) {
        const value = bound(target, property);
        if (property !== "appendMany" || typeof value !== "function") return value;
        return (entries: unknown) => {
          writes += 1;
          if (writes === options.refuseWrite) throw full("/state/agents/main/agent.sqlite");
          return value(entries);
        };
      },
    });
  const runs = new Proxy(store.runs, {
    get(target, property) {
      const value = bound(target, property);
      if (property !== "finish" || !options.refuseFinish) return value;
      return async () => {
        throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
      };
    },
  });
  return new Proxy(store, {
    get(target, property) {
      if (property === "runs") return runs;
      // What a SQLite store's bare errors are about (controlPlanePathOf).
      if (property === "controlPlanePath") return "/state/state/kernel.sqlite";
      if (property !== "openTranscript") return bound(target, property);
      return (...args: Parameters<SessionStore["openTranscript"]>) =>
        transcriptOf(target.openTranscript(...args));
    },
  });
}

describe("a store that cannot take the turn's writes", () => {
  it("ends the turn with reason storage when the reply cannot be stored, the reply kept and the run failed", async () => {
    const context = await harness.context("agent:main:full");
    // Write 1: the user message, before the request. Write 2: the reply, after it.
    const store = failingStore(harness.store, { refuseWrite: 2 });
    faux.setResponses([fauxAssistantMessage("Paid for, not stored.")]);
    const result = await executeTurn(
      { ...context, store },
      { prompt: "hi", timeoutMs: 30_000, entryPoint: "agent" },
    );
    expect(result.status).toBe("error");
    expect(result.reason).toBe(STORAGE_REASON);
    expect(result.errorMessage).toBe(
      "the disk holding /state/agents/main/agent.sqlite is full (SQLITE_FULL): free space on it and run the command again",
    );
    expect(result.payloads.map((payload) => payload.text)).toEqual(["Paid for, not stored."]);
    expect(result.assistantText).toBe("Paid for, not stored.");
    expect(faux.state.callCount).toBe(1);
    const run = await harness.store.runs.get(result.runId);
    expect(run).toMatchObject({ status: "failed", errorReason: STORAGE_REASON });
    expect(run?.errorMessage).toContain("/state/agents/main/agent.sqlite");
    // Only what was sent (the system and user messages) reached the transcript, not the reply.
    const kinds = harness.store
      .openTranscript(AGENT, context.sessionId)
      .getEntries()
      .filter((entry) => entry.type === "message")
      .map((entry) => (entry.message as { role: string }).role);
    expect(kinds).toEqual(["system", "user"]);
  });

  it("throws TurnNotRecordedError with the result when the run record cannot be finished", async () => {
    const context = await harness.context("agent:main:unrecorded");
    const store = failingStore(harness.store, { refuseFinish: true });
    faux.setResponses([fauxAssistantMessage("Answered, but not recorded.")]);
    const error = await executeTurn(
      { ...context, store },
      { prompt: "hi", timeoutMs: 30_000, entryPoint: "agent" },
    ).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(TurnNotRecordedError);
    const notRecorded = error as TurnNotRecordedError;
    expect(notRecorded.failure.kind).toBe("disk_full");
    expect(notRecorded.failure.path).toBe("/state/state/kernel.sqlite");
    expect(notRecorded.result.payloads.map((payload) => payload.text)).toEqual([
      "Answered, but not recorded.",
    ]);
    // The run stays as started: the next open of a store marks it interrupted once its process is gone.
    expect((await harness.store.runs.get(notRecorded.result.runId))?.status).toBe("running");
  });
});
