// The narrowing layer over a real preparation's tool policy (the kernel resolves the config's layers): it can
// only take tools away, a deny beats an allow, and a tool the config blocks keeps the config's reason.
import { createKernel, openKernelStore } from "@agent-kernel/kernel";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { createPlannerHarness } from "../test/harness.ts";
import { narrowToolPolicy, withNarrowedTools } from "./narrow-policy.ts";

async function prepared(onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const h = await createPlannerHarness();
  onTestFinished(() => h.close());
  const store = await openKernelStore({ stateDir: h.stateDir });
  onTestFinished(() => store.close());
  return createKernel({ config: h.config, store }).prepareSession({ sessionKey: "agent:main:narrow" });
}

describe("narrowToolPolicy", () => {
  it("never widens: the config's deny stays with its reason even when the layer allows the tool", async ({
    onTestFinished,
  }) => {
    const base = await prepared(onTestFinished);
    expect(base.toolPolicy.isAllowed("exec")).toBe(false);
    const narrowed = narrowToolPolicy(base.toolPolicy, { name: "step", allow: ["exec", "read"] });
    expect(narrowed.decide("exec")).toEqual(base.toolPolicy.decide("exec"));
    expect(narrowed.isAllowed("read")).toBe(true);
    expect(narrowed.decide("write")).toMatchObject({
      allowed: false,
      layer: "step.allow",
      kind: "extra",
      rule: "not in the allowlist (exec, read)",
    });
  });

  it("a deny wins over an allow of the same tool; no allow list keeps what the config allows", async ({
    onTestFinished,
  }) => {
    const base = await prepared(onTestFinished);
    const both = narrowToolPolicy(base.toolPolicy, {
      name: "step",
      allow: ["read", "write"],
      deny: ["Write"],
    });
    expect(both.decide("write")).toMatchObject({ allowed: false, layer: "step.deny", rule: 'deny "write"' });
    expect(both.filter([{ name: "read" }, { name: "write" }, { name: "exec" }])).toEqual([{ name: "read" }]);
    const denyOnly = withNarrowedTools(base, { name: "step", deny: ["edit"] });
    const allowedBefore = base.toolDecisions.filter((d) => d.allowed).map((d) => d.normalized);
    const allowedAfter = denyOnly.toolDecisions.filter((d) => d.allowed).map((d) => d.normalized);
    expect(allowedAfter).toEqual(allowedBefore.filter((name) => name !== "edit"));
    expect(denyOnly.toolPolicy.layers.at(-1)).toEqual({
      kind: "extra",
      name: "step",
      deny: [{ pattern: "edit" }],
    });
  });
});
