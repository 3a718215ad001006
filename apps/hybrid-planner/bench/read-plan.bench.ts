// What checking a plan costs on top of parsing it: a 6-step plan through JSON.parse alone (the baseline) and
// through readPlan (JSON, the zod schema, every named tool checked against the config's decisions).
import { defineSuite } from "@agent-kernel/bench";
import { readPlan } from "../src/plan-schema.ts";

const REPEAT = 500;
const offered = ["read", "write", "edit", "exec", "process", "apply_patch", "message"];
const tools = {
  offered,
  decide: (name: string) => ({ allowed: name !== "exec", layer: "tools.deny", rule: `deny "${name}"` }),
};
const plan = JSON.stringify({
  steps: Array.from({ length: 6 }, (_, index) => ({
    id: `step-${index}`,
    prompt: `Do part ${index} of the work, carefully, and report what changed.`,
    tools: { allow: ["read", "write"], deny: ["edit"] },
    maxToolCalls: 4,
  })),
  limits: { maxToolCalls: 20 },
});

export default defineSuite({
  name: `read a 6-step plan ×${REPEAT}`,
  baseline: "JSON.parse only",
  iterations: 10,
  itemsPerIteration: REPEAT,
  cases: [
    {
      name: "JSON.parse only",
      run: () => {
        for (let i = 0; i < REPEAT; i++) JSON.parse(plan);
      },
    },
    {
      name: "readPlan (JSON + schema + tool checks)",
      run: () => {
        for (let i = 0; i < REPEAT; i++) {
          if (!readPlan(plan, tools).ok) throw new Error("the bench plan must be valid");
        }
      },
    },
  ],
});
