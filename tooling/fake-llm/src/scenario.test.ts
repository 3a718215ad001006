// Scenario validation: good files load, every problem is reported with its path in one error.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadScenarioFile, ScenarioError, validateScenario } from "./scenario.ts";
import { startFakeLlm } from "./server.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "demo.json");

function issuesOf(input: unknown): readonly string[] {
  try {
    validateScenario(input);
  } catch (error) {
    if (error instanceof ScenarioError) return error.issues;
    throw error;
  }
  return [];
}

describe("validateScenario", () => {
  it("loads the example scenario", async () => {
    const scenario = await loadScenarioFile(EXAMPLE);
    expect(scenario.rules?.[0]?.when).toEqual({ apiKeySuffix: "AAAA" });
    expect(scenario.steps).toHaveLength(2);
  });

  it("reports every problem with its path", () => {
    expect(
      issuesOf({
        steps: [
          { type: "error", fault: "ratelimit" },
          { type: "response", text: 3, usage: { output: -1 }, chunkSize: 0, repeat: 0.5 },
          { type: "reply" },
          { type: "response", content: [{ type: "image" }], text: "x" },
          { type: "stall", afterDeltas: 1.5, times: 0 },
          { type: "error", fault: "auth", variant: "openai", status: 200, colour: "red" },
        ],
        rules: [{ when: { key: "x" }, steps: {} }],
        extra: true,
      }),
    ).toEqual([
      "extra: unknown field (expected rules, steps, fallback)",
      "rules[0].when.key: unknown field (expected provider, model, apiKeySuffix)",
      "rules[0].steps: expected an array of steps (got {})",
      'steps[0].fault: expected one of rate_limit, auth, billing, context_overflow, server_error, overloaded, unavailable (got "ratelimit")',
      "steps[1].text: expected a string (got 3)",
      "steps[1].usage.input: required",
      "steps[1].usage.output: expected a non-negative integer (got -1)",
      "steps[1].chunkSize: expected an integer ≥ 1 (got 0)",
      "steps[1].repeat: expected an integer ≥ 1 (got 0.5)",
      'steps[2].type: expected one of response, error, reset, stall, malformed, stream_error (got "reply")',
      "steps[3].text: not allowed together with content",
      'steps[3].content[0].type: expected one of text, thinking, toolCall (got "image")',
      'steps[4].times: expected an integer ≥ 1 or "always" (got 0)',
      "steps[4].afterDeltas: expected a non-negative integer (got 1.5)",
      'steps[5].colour: unknown field for a "error" step',
      "steps[5].status: expected an HTTP error status 400–599 (got 200)",
      'steps[5].variant: only applies to fault "context_overflow"',
    ]);
  });

  it("names the file and says when it is not JSON", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fake-llm-"));
    const file = join(dir, "bad.json");
    await writeFile(file, "{ steps: [] }");
    await expect(loadScenarioFile(file)).rejects.toThrow(
      `invalid fake-llm scenario (${file}):\n  not valid JSON`,
    );
  });

  it("is enforced by the server API too", async () => {
    await expect(startFakeLlm({ scenario: { steps: [{ type: "nope" }] } as never })).rejects.toBeInstanceOf(
      ScenarioError,
    );
    const llm = await startFakeLlm();
    try {
      expect(() => llm.enqueue({ type: "error" } as never)).toThrow("steps[0].fault: required");
      expect(() => llm.addRule({ when: { model: 1 }, steps: [] } as never)).toThrow("rules[0].when.model");
      expect(llm.pendingSteps()).toBe(0);
    } finally {
      await llm.close();
    }
  });
});
