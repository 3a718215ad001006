// Tests of the layer table's lookups: exact names before patterns, and the
// table keeping dependencies pointing down. Does not own checking a workspace.
import { describe, expect, test } from "vitest";
import {
  APP_LAYER,
  appLayerEntryFor,
  GATEWAY_APP_NAME,
  GATEWAY_LAYER,
  layerEntryFor,
  mayDependOn,
  PACKAGE_LAYERS,
  restrictionFor,
  UMBRELLA_APP_NAME,
  UMBRELLA_LAYER,
} from "./layers.ts";

describe("layer table", () => {
  test("channels-core is layer 3 and other channels-* adapters layer 4", () => {
    expect(layerEntryFor("@agent-kernel/channels-core")?.layer).toBe(3);
    expect(layerEntryFor("@agent-kernel/channels-slack")?.layer).toBe(4);
    expect(layerEntryFor("@agent-kernel/channels-")).toBeUndefined();
    expect(layerEntryFor("@agent-kernel/widgets")).toBeUndefined();
  });

  test("no dependency points up, and the table has no cycle", () => {
    const table = { ...PACKAGE_LAYERS, "apps/*": APP_LAYER };
    const dependsOn = (name: string, target: string, seen: Set<string>): boolean => {
      const entry = table[name as keyof typeof table] ?? layerEntryFor(name);
      return (entry?.mayDependOn ?? []).some(
        (next) => next === target || (!seen.has(next) && dependsOn(next, target, seen.add(next))),
      );
    };
    for (const [name, entry] of Object.entries(table)) {
      for (const dependency of entry.mayDependOn) {
        // Same-layer edges exist (turn-pipeline → runtime-resolver); upward ones never.
        expect(layerEntryFor(dependency)?.layer, `${name} → ${dependency}`).toBeLessThanOrEqual(entry.layer);
      }
      expect(dependsOn(name, name, new Set()), `${name} depends on itself`).toBe(false);
    }
  });

  test("apps may use channel adapters and the kernel, not the layers below the kernel", () => {
    expect(mayDependOn(APP_LAYER, "@agent-kernel/channels-telegram")).toBe(true);
    expect(mayDependOn(APP_LAYER, "@agent-kernel/kernel")).toBe(true);
    expect(mayDependOn(APP_LAYER, "@agent-kernel/turn-pipeline")).toBe(false);
  });

  test("the umbrella sits above the apps and may use them; no other app may, and none may use the umbrella", () => {
    expect(appLayerEntryFor(UMBRELLA_APP_NAME)).toBe(UMBRELLA_LAYER);
    expect(appLayerEntryFor("@agent-kernel/cron")).toBe(APP_LAYER);
    expect(UMBRELLA_LAYER.layer).toBeGreaterThan(APP_LAYER.layer);
    for (const app of ["agent", "auto-reply", "cron", "followup", "gateway", "hybrid-planner"]) {
      expect(mayDependOn(UMBRELLA_LAYER, `@agent-kernel/${app}`), app).toBe(true);
      expect(mayDependOn(APP_LAYER, `@agent-kernel/${app}`), app).toBe(false);
    }
    expect(mayDependOn(APP_LAYER, UMBRELLA_APP_NAME)).toBe(false);
    // Still above the kernel, never beside its internals.
    expect(mayDependOn(UMBRELLA_LAYER, "@agent-kernel/kernel")).toBe(true);
    expect(mayDependOn(UMBRELLA_LAYER, "@agent-kernel/session-store")).toBe(false);
  });

  test("the gateway may use the three apps it runs in one daemon, and no other app nor the umbrella", () => {
    expect(appLayerEntryFor(GATEWAY_APP_NAME)).toBe(GATEWAY_LAYER);
    for (const app of ["auto-reply", "cron", "followup"])
      expect(mayDependOn(GATEWAY_LAYER, `@agent-kernel/${app}`), app).toBe(true);
    for (const app of ["agent", "hybrid-planner"])
      expect(mayDependOn(GATEWAY_LAYER, `@agent-kernel/${app}`), app).toBe(false);
    expect(mayDependOn(GATEWAY_LAYER, UMBRELLA_APP_NAME)).toBe(false);
    expect(mayDependOn(APP_LAYER, GATEWAY_APP_NAME)).toBe(false);
  });

  test("the pi SDK is restricted by scope", () => {
    expect(restrictionFor("@earendil-works/pi-coding-agent")?.label).toBe("the pi SDK");
    expect(restrictionFor("zod")).toBeUndefined();
  });
});
