// The harness's own rules, so that a broken harness cannot pass the matrix: scenario files are checked
// field by field, goldens are never written under CI and are written as the repo's formatter writes JSON,
// the first difference is named by its path, and each policy check catches the delivery it forbids.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AGENT_POLICY } from "../src/apps/agent.ts";
import { AUTO_REPLY_POLICY } from "../src/apps/auto-reply.ts";
import { unshapeCronPrompt } from "../src/apps/cron.ts";
import { FOLLOWUP_POLICY } from "../src/apps/followup.ts";
import { checkDelivery } from "../src/delivery-check.ts";
import { formatJson, GOLDENS_DIR, goldenUpdateRequested } from "../src/goldens.ts";
import type { KernelOutcome } from "../src/kernel-outcome.ts";
import { normaliseText, normaliseValue, recoveryView } from "../src/kernel-outcome.ts";
import { firstDifference, scenarioCallsTools } from "../src/run.ts";
import { loadScenarios, ParityScenarioError, parseScenario } from "../src/scenarios.ts";

function outcome(...statuses: string[]): KernelOutcome {
  return {
    runs: statuses.map((status) => ({ record: { status }, assistantMessages: [{ text: "Hi there." }] })),
    transcripts: [],
  };
}

describe("scenario files", () => {
  it("every file loads, and the set covers what the parity claim needs", () => {
    const scenarios = loadScenarios();
    const covers = new Set(scenarios.flatMap((scenario) => scenario.covers));
    for (const needed of [
      "plain",
      "tools",
      "blocks",
      "reasoning-tags",
      "directives",
      "fault:rate_limit",
      "fault:auth",
      "fault:billing",
      "fault:context_overflow",
      "fault:reset",
      "5xx",
      "fallback",
      "compaction",
      "abort",
      "timeout",
      "concurrent",
      "thinking-fallback",
    ])
      expect(covers, needed).toContain(needed);
  });

  it("a bad scenario names every problem with its path", () => {
    let message = "";
    try {
      parseScenario("bad", {
        description: "",
        covers: [],
        profiles: ["a"],
        model: [{ steps: [{ type: "error", fault: "ratelimit" }] }],
        inbound: [{ text: "x", concurrentWithPrevious: true }],
        expectStatuses: ["ok"],
        colour: "red",
      });
    } catch (error) {
      expect(error).toBeInstanceOf(ParityScenarioError);
      message = (error as Error).message;
    }
    expect(message).toContain("colour: unknown field");
    expect(message).toContain("description: required text");
    expect(message).toContain("covers: expected a non-empty list");
    expect(message).toContain("model[0].profile: required when the scenario has profiles");
    expect(message).toContain("model[0].steps[0].fault: expected one of");
    expect(message).toContain("inbound[0].concurrentWithPrevious");
    expect(message).toContain("expectStatuses: expected a list of");
  });
});

describe("goldens", () => {
  it("are never rewritten under CI, and only with UPDATE_GOLDENS=1", () => {
    expect(goldenUpdateRequested({})).toBe(false);
    expect(goldenUpdateRequested({ UPDATE_GOLDENS: "1" })).toBe(true);
    expect(() => goldenUpdateRequested({ UPDATE_GOLDENS: "1", CI: "true" })).toThrow(/refused under CI/);
  });

  it("are written exactly as the repo's formatter formats JSON", () => {
    for (const file of readdirSync(GOLDENS_DIR)) {
      const text = readFileSync(join(GOLDENS_DIR, file), "utf8");
      expect(`${formatJson(JSON.parse(text))}\n`, file).toBe(text);
    }
  });
});

describe("normalisation and comparison", () => {
  it("drops ids and times, replaces the cell's paths and keys, keeps what happened", () => {
    const cell = { root: "/tmp/parity-x/s--agent", id: "c7" };
    expect(
      normaliseValue(
        {
          runId: "r",
          ts: 1,
          sessionKey: "agent:main:cron:job",
          record: {
            status: "failed",
            errorMessage: "key sk-parity-c7-profile-a at /tmp/parity-x/s--agent/state",
          },
          id: "m1",
        },
        cell,
      ),
    ).toEqual({
      id: "m1",
      record: { errorMessage: "key sk-parity-<cell-key>-profile-a at <cell>/state", status: "failed" },
      sessionKey: "<session-key>",
    });
  });

  it("treats the SDK's two wordings of one abort as one", () => {
    const cell = { root: "/x", id: "c1" };
    expect(normaliseText("Request was aborted", cell)).toBe(normaliseText("Request aborted", cell));
  });

  it("names the first difference by its path", () => {
    expect(firstDifference({ runs: [{ a: 1 }] }, { runs: [{ a: 2 }] })).toBe(
      "$.runs[0].a: expected 1, got 2",
    );
    expect(firstDifference([1], [1, 2])).toBe("$[1]: expected (absent), got 2");
    expect(firstDifference({ a: [1] }, { a: [1] })).toBeUndefined();
  });

  it("the recovery view drops what fixed run options change and keeps what recovery did", () => {
    const run = (thinkingLevel: string, action: string) => ({
      record: { status: "succeeded", thinkingLevel, model: "m1" },
      decisions: { runtime: { thinking: { value: thinkingLevel } } },
      attempts: [{ attempt: 1, thinkingLevel, outcome: "error", action }],
      assistantMessages: [],
      toolCalls: [],
      end: { status: "ok" },
    });
    const view = (thinking: string, action: string) =>
      recoveryView({
        runs: [run(thinking, action)],
        transcripts: [[{ type: "thinking_level_change" }, { type: "message", role: "user", text: "hi" }]],
      });
    expect(view("high", "rotate_profile:b")).toEqual(view("medium", "rotate_profile:b"));
    expect(view("high", "rotate_profile:b")).not.toEqual(view("high", "fallback_model:m2"));
    expect(view("high", "x").transcripts).toEqual([[{ type: "message", role: "user", text: "hi" }]]);
  });

  it("knows which scenarios call tools", () => {
    const byName = new Map(loadScenarios().map((scenario) => [scenario.name, scenario]));
    const called = (name: string) => {
      const scenario = byName.get(name);
      if (scenario === undefined) throw new Error(`no scenario ${name}`);
      return scenarioCallsTools(scenario);
    };
    expect(called("02-tool-use-write")).toBe(true);
    expect(called("01-plain-reply")).toBe(false);
  });

  it("maps a cron prompt back to the message", () => {
    expect(
      unshapeCronPrompt(
        "[cron:parity-1 Parity] hi there\nCurrent time: Sunday, 22 November 2026 (UTC)\nReference UTC: 2026-11-22 02:00 UTC",
      ),
    ).toBe("hi there");
  });
});

describe("delivery policy checks", () => {
  it("pass what each policy allows", () => {
    expect(
      checkDelivery(
        AUTO_REPLY_POLICY,
        outcome("succeeded"),
        [{ kind: "typing" }, { kind: "channel", text: "Hi there." }],
        {
          blockStreaming: false,
        },
      ),
    ).toEqual([]);
    expect(
      checkDelivery(
        AGENT_POLICY,
        outcome("failed"),
        [
          { kind: "stderr", text: "agent: run x ended error (auth).\n" },
          { kind: "exit", code: 1 },
        ],
        { blockStreaming: false },
      ),
    ).toEqual([]);
  });

  it("catch a silent reply, a raw error, a missing warning, an unwanted thread, blocks and typing", () => {
    const problems = (
      policy: typeof AUTO_REPLY_POLICY,
      statuses: string[],
      delivered: Parameters<typeof checkDelivery>[2],
    ) => checkDelivery(policy, outcome(...statuses), delivered, { blockStreaming: true }).join("\n");
    expect(
      problems(AUTO_REPLY_POLICY, ["succeeded"], [{ kind: "typing" }, { kind: "channel", text: "NO_REPLY" }]),
    ).toMatch(/silent/);
    expect(
      problems(
        AUTO_REPLY_POLICY,
        ["failed"],
        [{ kind: "typing" }, { kind: "channel", text: '⚠️ 401: {"message":"x"}' }],
      ),
    ).toMatch(/raw provider error/);
    expect(problems(AUTO_REPLY_POLICY, ["failed"], [{ kind: "typing" }])).toMatch(
      /1 failed run\(s\) but 0 warning/,
    );
    expect(problems(AUTO_REPLY_POLICY, ["succeeded"], [{ kind: "channel", text: "Hi there." }])).toMatch(
      /no block was sent[\s\S]*no typing indicator/,
    );
    expect(
      problems(
        AGENT_POLICY,
        ["succeeded"],
        [
          { kind: "channel", text: "x", replyTo: "1", isBlock: true },
          { kind: "exit", code: 0 },
        ],
      ),
    ).toMatch(/blocks were sent[\s\S]*was threaded/);
    expect(problems(AGENT_POLICY, ["failed"], [{ kind: "exit", code: 0 }])).toMatch(/non-zero exit/);
    expect(problems(FOLLOWUP_POLICY, ["failed"], [{ kind: "channel", text: "⚠️ The model is busy" }])).toMatch(
      /errors=status-error/,
    );
    expect(
      problems(
        AUTO_REPLY_POLICY,
        ["succeeded"],
        [
          { kind: "typing" },
          { kind: "channel", text: "Hi there.", isBlock: true },
          { kind: "channel", text: "Hi there." },
        ],
      ),
    ).toMatch(/repeated a streamed block/);
  });
});
