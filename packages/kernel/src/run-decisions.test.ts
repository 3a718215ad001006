// The decisions' JSON text (run-decisions.ts `json`): the same value, in the same key order, as serialising
// the decisions object, in ASCII; and what a real turn stores as its event 0 is that text.
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { createKernelHarness, type KernelHarness } from "../test/harness.ts";
import { RunDecisionMaker } from "./run-decisions.ts";

let h: KernelHarness;
afterEach(async () => {
  await h?.close();
});

const ASCII = /^[\x20-\x7e]*$/;

describe("the decisions' JSON text", () => {
  it("is JSON.stringify(decisions) as a value and in key order, in ASCII, with or without a parent run", async () => {
    h = await createKernelHarness({ config: { tools: { deny: ["exec"] } } });
    const prepared = await h.kernel.prepareSession({ sessionKey: "cli" });
    const maker = new RunDecisionMaker();
    const { policy, lines } = maker.policyFor(prepared, { prompt: "hi" });
    // The tool lines hold "—" (two-byte text in V8); the stored text escapes it.
    expect(lines.some((line) => line.includes("—"))).toBe(true);
    for (const run of [{}, { parentRunId: "parent-1", policy }]) {
      const decisions = maker.decisions(prepared, 1.23456, lines, run);
      const text = maker.json(prepared, decisions);
      expect(text).toMatch(ASCII);
      expect(JSON.stringify(JSON.parse(text))).toBe(JSON.stringify(decisions));
      // Made twice from the preparation's shared parts: the same text.
      expect(maker.json(prepared, decisions)).toBe(text);
    }
    // Tool lines of their own (extra tools explained after the defaults) are serialised for that turn.
    const extra = maker.decisions(prepared, 0, lines, { policy, extraTools: [{ name: "sessions_spawn" }] });
    expect(extra.toolPolicy.length).toBe(lines.length + 1);
    expect(JSON.stringify(JSON.parse(maker.json(prepared, extra)))).toBe(JSON.stringify(extra));
  });

  it("is what a turn stores as its event 0, read back as the outcome's decisions", async () => {
    h = await createKernelHarness({ config: { tools: { deny: ["exec"] } } });
    const prepared = await h.kernel.prepareSession({ sessionKey: "cli" });
    const outcome = await h.kernel.executeTurn(prepared, { prompt: "hello" });
    expect(outcome.status).toBe("ok");
    await h.store.flush();
    const db = new DatabaseSync(h.store.controlPlanePath, { readOnly: true });
    try {
      const row = db.prepare("SELECT data FROM run_events WHERE run_id = ? AND seq = 0").get(outcome.runId);
      const stored = String(row?.data);
      expect(stored).toMatch(ASCII);
      expect(stored).toContain("\\u2014");
      expect(JSON.parse(stored)).toEqual(JSON.parse(JSON.stringify(outcome.decisions)));
    } finally {
      db.close();
    }
    const [event0] = await h.store.runs.events(outcome.runId);
    expect(event0?.data).toEqual(JSON.parse(JSON.stringify(outcome.decisions)));
  });
});
