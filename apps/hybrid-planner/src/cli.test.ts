// `hybrid-planner` in-process against tooling/fake-llm: a plan runs and prints each step's answer; an invalid
// plan exits 3 with every problem on stderr; bad flags exit 2.
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { createPlannerHarness, type PlannerHarness, plannerReply, runBinary } from "../test/harness.ts";
import { EXIT, runPlannerCli } from "./cli.ts";

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void): Promise<PlannerHarness> {
  const h = await createPlannerHarness();
  onTestFinished(() => h.close());
  return h;
}

async function run(h: PlannerHarness, args: readonly string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runPlannerCli([...args, "--config", h.configPath], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    cwd: h.root,
  });
  return { code, stdout, stderr };
}

describe.concurrent("hybrid-planner", () => {
  it("runs a plan and prints each step's answer", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(
      reply(
        plannerReply({
          steps: [
            { id: "one", prompt: "say one" },
            { id: "two", prompt: "say two" },
          ],
        }),
      ),
      reply("1"),
      reply("2"),
    );
    expect(await run(h, ["-m", "count"])).toEqual({
      code: EXIT.ok,
      stdout: "[one] 1\n[two] 2\n",
      stderr: "",
    });
  });

  it("exits 3 for an invalid plan, naming every problem, and 2 for bad flags", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply(plannerReply({ steps: [{ id: "x", prompt: "p", tools: { allow: ["exec"] } }] })));
    const invalid = await run(h, ["-m", "run the tests", "--plan-id", "cli-bad"]);
    expect(invalid).toEqual({
      code: EXIT.invalidPlan,
      stdout: "",
      stderr:
        'hybrid-planner: the plan is invalid and was not run (1 problem):\n  - steps[0].tools.allow[0]: "exec" is not allowed by the config (tools.deny: deny "exec"); a plan can only narrow the tools\n',
    });
    expect(h.llm.requests).toHaveLength(1);
    expect((await run(h, [])).stderr).toBe(
      "hybrid-planner: nothing to plan: pass -m <goal>. Run `hybrid-planner --help` for usage.\n",
    );
    expect((await run(h, ["-m", "x", "--max-steps", "none"])).code).toBe(EXIT.usage);
    const ghost = await run(h, ["-m", "x", "--agent", "ghost"]);
    expect(ghost.code).toBe(EXIT.usage);
    expect(ghost.stderr).toMatch(/^hybrid-planner: cannot prepare the planner turn: .*ghost/);
    expect((await run(h, ["-m", "x", "--plan-id", "../etc"])).stderr).toBe(
      'hybrid-planner: plan id "../etc" is not usable (letters, digits, "_" or "-")\n',
    );
  });

  it("the hybrid-planner binary runs a plan as a subprocess and prints the result as JSON", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply(plannerReply({ steps: [{ id: "only", prompt: "answer" }] })), reply("answered"));
    const result = await runBinary(["-m", "answer me", "--json", "--config", h.configPath]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(EXIT.ok);
    const parsed = JSON.parse(result.stdout) as { status: string; steps: { id: string; text: string }[] };
    expect(parsed.status).toBe("ok");
    expect(parsed.steps.map((step) => [step.id, step.text])).toEqual([["only", "answered"]]);
  });
});
