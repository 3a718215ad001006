// The plan a planner turn must return: steps, each a prompt with optional tool limits, and plan-wide limits,
// as a zod schema, plus reading the planner's final text into a plan. Owns: the plan's shape, parsing the JSON
// (a fenced block is accepted), and checking every tool the plan names against what the config allows —
// a plan may only narrow the tools, so naming a tool the config does not offer or allow makes it invalid.
// Each problem is reported with its place in the plan. Does not own running the plan (planner.ts).
import { formatPath, issuesFromZod, knownKeysOf } from "@agent-kernel/config";
import { z } from "zod";

const toolName = z
  .string()
  .trim()
  .min(1, "expected a tool name")
  .regex(/^[a-z0-9_.-]+$/i, {
    error: "expected a tool name (letters, digits, _ . -), not a pattern or group",
  });

const count = z.number().int("expected a whole number").min(0, "expected 0 or more");

export const planStepSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, { error: 'expected a step id (letters, digits, "_" or "-")' }),
  prompt: z.string().trim().min(1, "expected the step's prompt"),
  tools: z
    .strictObject({ allow: z.array(toolName).optional(), deny: z.array(toolName).optional() })
    .optional()
    .describe("Narrows the config's tools for this step: only `allow` (if given), never `deny`."),
  maxToolCalls: count.optional().describe("The step is stopped at its next tool call beyond this."),
});

export const planSchema = z
  .strictObject({
    steps: z.array(planStepSchema).min(1, "expected at least one step"),
    limits: z
      .strictObject({
        maxToolCalls: count.optional().describe("Tool calls across all steps."),
        timeoutSeconds: z.number().int().positive().optional().describe("Per step."),
      })
      .optional(),
  })
  .superRefine((plan, ctx) => {
    const seen = new Map<string, number>();
    plan.steps.forEach((step, index) => {
      const first = seen.get(step.id.toLowerCase());
      if (first !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["steps", index, "id"],
          message: `duplicate step id "${step.id}" (also steps[${first}].id)`,
        });
      } else seen.set(step.id.toLowerCase(), index);
    });
  });

export type Plan = z.infer<typeof planSchema>;
export type PlanStep = z.infer<typeof planStepSchema>;

/** One reason a plan cannot run: where in the plan (`steps[1].tools.allow[0]`, or `plan`) and what. */
export interface PlanProblem {
  readonly path: string;
  readonly message: string;
}

/** What the config lets a step use: the tools the executor offers, and the config's decision on each. */
export interface ToolsInConfig {
  readonly offered: readonly string[];
  decide(name: string): { readonly allowed: boolean; readonly layer: string; readonly rule: string };
}

export type PlanReading =
  | { readonly ok: true; readonly plan: Plan }
  | { readonly ok: false; readonly problems: readonly PlanProblem[] };

const planKnownKeys = knownKeysOf(planSchema);

/** The JSON inside a ```json fence when the text is one, else the text. */
function unfenced(text: string): string {
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n```$/i.exec(text.trim());
  return fenced?.[1] ?? text.trim();
}

/** Reads the planner's final text into a plan, or every problem that keeps it from running. */
export function readPlan(
  finalText: string,
  tools: ToolsInConfig,
  options: { readonly maxSteps?: number } = {},
): PlanReading {
  const fail = (message: string, path = "plan"): PlanReading => ({
    ok: false,
    problems: [{ path, message }],
  });
  const text = unfenced(finalText);
  if (text === "") return fail("the planner's reply has no <final> block with the plan");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return fail(`the plan is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = planSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    return {
      ok: false,
      problems: issuesFromZod(parsed.error.issues, planKnownKeys).map((issue) => ({
        path: issue.path.length === 0 ? "plan" : formatPath(issue.path),
        message: issue.message,
      })),
    };
  }
  const plan = parsed.data;
  const problems: PlanProblem[] = [];
  const maxSteps = options.maxSteps;
  if (maxSteps !== undefined && plan.steps.length > maxSteps) {
    problems.push({
      path: "steps",
      message: `${plan.steps.length} steps, more than the ${maxSteps} allowed`,
    });
  }
  const offered = new Set(tools.offered);
  plan.steps.forEach((step, index) => {
    for (const list of ["allow", "deny"] as const) {
      step.tools?.[list]?.forEach((name, at) => {
        const path = `steps[${index}].tools.${list}[${at}]`;
        const normalized = name.trim().toLowerCase();
        if (!offered.has(normalized)) {
          problems.push({ path, message: `unknown tool "${name}" (tools: ${[...offered].join(", ")})` });
          return;
        }
        const decision = tools.decide(normalized);
        if (list === "allow" && !decision.allowed) {
          problems.push({
            path,
            message: `"${normalized}" is not allowed by the config (${decision.layer}: ${decision.rule}); a plan can only narrow the tools`,
          });
        }
      });
    }
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, plan };
}
