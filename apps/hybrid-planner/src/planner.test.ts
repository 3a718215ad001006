// The hybrid planner end to end: the real kernel, a real SQLite store, real pi and real HTTP to tooling/fake-llm,
// which scripts the planner's answer. A valid plan runs step by step with its tool limits; an invalid plan is
// reported with what is wrong and where, and no step ever runs (no model request, no run record).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fault, reply, toolCall } from "@agent-kernel/fake-llm";
import { listRuns, openKernelStore, showRun } from "@agent-kernel/kernel";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { createPlannerHarness, offeredTools, type PlannerHarness, plannerReply } from "../test/harness.ts";
import { type HybridPlanResult, planStepsSessionKey, runHybridPlan } from "./planner.ts";

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void): Promise<PlannerHarness> {
  const h = await createPlannerHarness();
  onTestFinished(() => h.close());
  return h;
}

/** Every stored run of the plan: the planner's and the steps'. */
async function storedRuns(h: PlannerHarness, planId: string) {
  const store = await openKernelStore({ stateDir: h.stateDir });
  try {
    const all = await listRuns(store, h.config, { agentId: "main", limit: 100 });
    const steps = await listRuns(store, h.config, {
      sessionKey: planStepsSessionKey("main", planId),
      limit: 100,
    });
    const reports = await Promise.all(steps.map((run) => showRun(store, run.runId)));
    return { all, steps, reports };
  } finally {
    await store.close();
  }
}

function systemPrompt(body: unknown): string {
  const messages = (body as { messages?: { role: string; content: unknown }[] }).messages ?? [];
  const system = messages.find((message) => message.role === "system" || message.role === "developer");
  return typeof system?.content === "string" ? system.content : JSON.stringify(system?.content ?? "");
}

describe.concurrent("runHybridPlan", () => {
  it("plans with tools off, <final> enforced and thinking high, then runs each step with its tools narrowed", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const plan = {
      steps: [
        { id: "read-notes", prompt: "Read notes.md", tools: { allow: ["read"] }, maxToolCalls: 2 },
        { id: "summarise", prompt: "Write summary.md", tools: { deny: ["edit"] } },
      ],
      limits: { maxToolCalls: 5 },
    };
    h.llm.enqueue(
      reply(plannerReply(plan)),
      toolCall("read", { path: "notes.md" }),
      reply("The notes say: ship on friday."),
      toolCall("write", { path: "summary.md", content: "Ship on Friday.\n" }),
      reply("Wrote summary.md."),
    );
    const result = await runHybridPlan({ config: h.config, goal: "Summarise my notes", planId: "p1" });
    expect(result.status).toBe("ok");
    if (result.status !== "ok") return;
    expect(result.plan).toEqual(plan);
    expect(result.planner.finalText).toBe(JSON.stringify(plan));
    expect(result.steps.map((step) => [step.id, step.status, step.toolCalls, step.text])).toEqual([
      ["read-notes", "ok", 1, "The notes say: ship on friday."],
      ["summarise", "ok", 1, "Wrote summary.md."],
    ]);
    expect(readFileSync(join(h.workspaceDir, "summary.md"), "utf8")).toBe("Ship on Friday.\n");

    const [plannerRequest, step1, , step2] = h.llm.requests;
    // The planner turn: no tools offered, the planning instructions in the system prompt, thinking high.
    expect(offeredTools(plannerRequest?.body)).toEqual([]);
    expect(systemPrompt(plannerRequest?.body)).toContain("You are the planner.");
    expect(systemPrompt(plannerRequest?.body)).toContain("naming exact tools from: ");
    expect(JSON.stringify(plannerRequest?.body)).toContain('"high"');
    // Step 1 offers only `read`; step 2 everything the config allows except `edit` (and never `exec`).
    expect(offeredTools(step1?.body)).toEqual(["read"]);
    expect(result.steps[0]?.tools).toEqual(["read"]);
    const step2Tools = offeredTools(step2?.body);
    expect(step2Tools).toContain("write");
    expect(step2Tools).not.toContain("edit");
    expect(step2Tools).not.toContain("exec");
    expect(step2Tools).toEqual([...(result.steps[1]?.tools ?? [])].sort());

    const { all, steps, reports } = await storedRuns(h, "p1");
    expect(all).toHaveLength(3);
    expect(all.every((run) => run.entryPoint === "hybrid-planner")).toBe(true);
    expect(steps.map((run) => run.runId).sort()).toEqual(result.steps.map((step) => step.runId).sort());
    const firstStep = reports.find((report) => report?.run.runId === result.steps[0]?.runId);
    expect(firstStep?.decisions?.toolPolicy).toContain(
      "write: blocked by plan.steps[0].tools.allow — not in the allowlist (read)",
    );
    const plannerRun = await (async () => {
      const store = await openKernelStore({ stateDir: h.stateDir });
      try {
        return await showRun(store, result.planner.runId);
      } finally {
        await store.close();
      }
    })();
    expect(plannerRun?.decisions?.defaults).toMatchObject({ enforceFinalTag: true, promptMode: "minimal" });
    expect(plannerRun?.decisions?.runtime).toMatchObject({ thinking: { value: "high" } });
    expect(plannerRun?.decisions?.toolPolicy).toContain(
      "read: blocked by hybrid-planner.allow — tools are off in the planner turn",
    );
  });

  const invalid: readonly {
    readonly name: string;
    readonly answer: string;
    readonly maxSteps?: number;
    readonly problems: readonly { path: string; message: string | RegExp }[];
  }[] = [
    {
      name: "not JSON",
      answer: plannerReply('{"steps": [ {"id": "a", '),
      problems: [{ path: "plan", message: /^the plan is not valid JSON: / }],
    },
    {
      name: "no <final> block",
      answer: 'Plan: {"steps":[{"id":"a","prompt":"x"}]}',
      problems: [{ path: "plan", message: "the planner's reply has no <final> block with the plan" }],
    },
    {
      name: "schema violations",
      answer: plannerReply({ steps: [{ id: "a" }, { id: "b", prompt: "x", maxToolCalls: -1, retries: 3 }] }),
      problems: [
        { path: "steps[0].prompt", message: /expected/ },
        { path: "steps[1].maxToolCalls", message: /expected 0 or more/ },
        { path: "steps[1].retries", message: /unknown key/ },
      ],
    },
    {
      name: "duplicate step ids",
      answer: plannerReply({
        steps: [
          { id: "a", prompt: "x" },
          { id: "A", prompt: "y" },
        ],
      }),
      problems: [{ path: "steps[1].id", message: 'duplicate step id "A" (also steps[0].id)' }],
    },
    {
      name: "a tool the config denies",
      answer: plannerReply({
        steps: [{ id: "run", prompt: "run the tests", tools: { allow: ["read", "exec"] } }],
      }),
      problems: [
        {
          path: "steps[0].tools.allow[1]",
          message:
            '"exec" is not allowed by the config (tools.deny: deny "exec"); a plan can only narrow the tools',
        },
      ],
    },
    {
      name: "an unknown tool",
      answer: plannerReply({ steps: [{ id: "go", prompt: "go", tools: { deny: ["teleport"] } }] }),
      problems: [{ path: "steps[0].tools.deny[0]", message: /^unknown tool "teleport" \(tools: .*read/ }],
    },
    {
      name: "more steps than allowed",
      maxSteps: 2,
      answer: plannerReply({ steps: ["a", "b", "c"].map((id) => ({ id, prompt: id })) }),
      problems: [{ path: "steps", message: "3 steps, more than the 2 allowed" }],
    },
  ];

  for (const testCase of invalid) {
    it(`reports an invalid plan (${testCase.name}) and never runs a step`, async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      // A step's answers are queued too: were a step run, it would find them.
      h.llm.enqueue(reply(testCase.answer), toolCall("write", { path: "x.txt", content: "x" }), reply("ran"));
      const result: HybridPlanResult = await runHybridPlan({
        config: h.config,
        goal: "do things",
        planId: "bad",
        ...(testCase.maxSteps === undefined ? {} : { maxSteps: testCase.maxSteps }),
      });
      expect(result.status).toBe("invalid-plan");
      if (result.status !== "invalid-plan") return;
      for (const expected of testCase.problems) {
        expect(result.problems).toContainEqual({
          path: expected.path,
          message:
            typeof expected.message === "string" ? expected.message : expect.stringMatching(expected.message),
        });
      }
      expect(h.llm.requests).toHaveLength(1);
      expect(existsSync(join(h.workspaceDir, "x.txt"))).toBe(false);
      const { all, steps } = await storedRuns(h, "bad");
      expect(steps).toEqual([]);
      expect(all.map((run) => run.runId)).toEqual([result.planner.runId]);
    });
  }

  it("stops a step at its tool-call limit and runs no later step", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(
      reply(
        plannerReply({
          steps: [
            { id: "look", prompt: "look once", tools: { allow: ["read"] }, maxToolCalls: 1 },
            { id: "after", prompt: "never" },
          ],
        }),
      ),
      toolCall("read", { path: "notes.md" }),
      toolCall("read", { path: "notes.md" }),
      reply("looked twice"),
      reply("after ran"),
    );
    const result = await runHybridPlan({ config: h.config, goal: "look", planId: "limited" });
    expect(result.status).toBe("step-failed");
    if (result.status !== "step-failed") return;
    expect(result.failedStep).toBe("look");
    expect(result.error).toBe('step "look" made more than 1 tool call and was stopped');
    expect(result.steps.map((step) => [step.id, step.status, step.toolCalls])).toEqual([
      ["look", "tool-limit", 2],
    ]);
    const { steps } = await storedRuns(h, "limited");
    expect(steps.map((run) => run.status)).toEqual(["aborted"]);
    expect(h.llm.requests.map((request) => request.served)).not.toContain(null);
    expect(h.llm.pendingSteps()).toBeGreaterThanOrEqual(1);
  });

  it("reports a failed planner turn and runs nothing else", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(fault("auth", { times: "always" }));
    const result = await runHybridPlan({ config: h.config, goal: "anything", planId: "down" });
    expect(result.status).toBe("planner-failed");
    if (result.status !== "planner-failed") return;
    expect(result.error).toMatch(/^error: auth/);
    expect((await storedRuns(h, "down")).steps).toEqual([]);
  });
});
