// Tests of the layer check. Owns: the guard over this repository (any upward,
// sideways or undeclared import anywhere fails the test suite) and one fixture
// workspace per rule under fixtures/. Does not own the tokenizer's edge cases
// (import-scanner.test.ts) or the command line (cli.test.ts).
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { checkWorkspace, discoverWorkspacePackages, packageNameOf, runLayerCheck } from "./layer-check.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..", "..", "..");
const fixture = (name: string): string => join(import.meta.dirname, "..", "fixtures", name);

/** The parts of each violation a test cares about, in report order. */
const summarize = (rootDir: string) =>
  checkWorkspace(rootDir).map(({ file, line, rule, specifier }) => ({ file, line, rule, specifier }));

describe("this repository", () => {
  test("has no layer violations", () => {
    // On failure the diff lists each violation's message: fix the import, or the table in layers.ts.
    expect(checkWorkspace(REPO_ROOT).map((violation) => violation.message)).toEqual([]);
  });

  test("is found as a workspace, this package included", () => {
    const names = discoverWorkspacePackages(REPO_ROOT).map((pkg) => pkg.name);
    expect(names).toContain("@agent-kernel/layer-check");
    expect(names).toContain("@agent-kernel/config");
  });
});

describe("fixture workspaces", () => {
  test("a clean workspace using every layer as allowed has no violations", () => {
    const result = runLayerCheck(fixture("clean"));
    expect(result.violations).toEqual([]);
    expect(result.packages.map((pkg) => pkg.relativeDir)).toEqual([
      "packages/channels-core",
      "packages/channels-slack",
      "packages/config",
      "packages/kernel",
      "packages/runtime-resolver",
      "packages/session-store",
      "packages/tool-policy",
      "packages/turn-pipeline",
      "apps/agent",
      "tooling/fake-llm",
    ]);
  });

  test("config importing the kernel is one upward violation", () => {
    expect(checkWorkspace(fixture("upward-import"))).toEqual([
      {
        packageName: "@agent-kernel/config",
        file: "packages/config/src/index.ts",
        line: 3,
        specifier: "@agent-kernel/kernel",
        rule: "upward-or-sideways",
        message:
          'packages/config/src/index.ts:3 imports "@agent-kernel/kernel": config (layer 0) may depend only on: (none)',
      },
    ]);
  });

  test("only the umbrella (apps/agent-kernel, @agent-kernel/cli) may depend on other apps", () => {
    // The umbrella declares and imports agent and cron: allowed. cron doing the same with agent is not.
    expect(checkWorkspace(fixture("umbrella")).map((violation) => violation.message)).toEqual([
      'apps/cron/package.json:6 declares "@agent-kernel/agent" in dependencies: cron (layer 5) may depend only on: kernel, channels-core, channels-*, config',
      'apps/cron/src/index.ts:1 imports "@agent-kernel/agent": cron (layer 5) may depend only on: kernel, channels-core, channels-*, config',
    ]);
  });

  test("tool-policy importing session-store (same layer) is a sideways violation", () => {
    const violations = checkWorkspace(fixture("sideways-import"));
    expect(violations.map((violation) => violation.message)).toEqual([
      'packages/tool-policy/src/index.ts:1 imports "@agent-kernel/session-store": tool-policy (layer 1) may depend only on: config',
    ]);
    expect(violations[0]?.rule).toBe("upward-or-sideways");
  });

  test("a forbidden workspace dependency in package.json is reported at its line, even unused", () => {
    expect(checkWorkspace(fixture("forbidden-dependency"))).toEqual([
      {
        packageName: "@agent-kernel/session-store",
        file: "packages/session-store/package.json",
        line: 7,
        specifier: "@agent-kernel/runtime-resolver",
        rule: "upward-or-sideways",
        message:
          'packages/session-store/package.json:7 declares "@agent-kernel/runtime-resolver" in dependencies: ' +
          "session-store (layer 1) may depend only on: config",
      },
    ]);
  });

  test("an import package.json does not declare is undeclared, third-party or workspace", () => {
    const violations = checkWorkspace(fixture("undeclared"));
    expect(violations.map(({ file, line, rule, specifier }) => ({ file, line, rule, specifier }))).toEqual([
      { file: "packages/config/src/index.ts", line: 2, rule: "undeclared", specifier: "zod" },
      {
        file: "packages/tool-policy/src/index.ts",
        line: 2,
        rule: "undeclared",
        specifier: "@agent-kernel/config",
      },
    ]);
    expect(violations[0]?.message).toBe(
      'packages/config/src/index.ts:2 imports "zod", which packages/config/package.json does not declare: ' +
        "non-test files may use only dependencies, peerDependencies or optionalDependencies",
    );
  });

  test("a devDependency may be used by test files but not by src, src/testing included", () => {
    expect(summarize(fixture("dev-dependency"))).toEqual([
      { file: "packages/tool-policy/src/index.ts", line: 1, rule: "undeclared", specifier: "fast-check" },
      {
        file: "packages/tool-policy/src/testing/arbitraries.ts",
        line: 1,
        rule: "undeclared",
        specifier: "fast-check",
      },
    ]);
    expect(checkWorkspace(fixture("dev-dependency"))[0]?.message).toContain(
      "declares only in devDependencies: non-test files may use only dependencies",
    );
  });

  test("the pi SDK outside turn-pipeline, kernel and tooling is forbidden, apps included", () => {
    const violations = checkWorkspace(fixture("pi-outside-pipeline"));
    expect(violations.map(({ file, line, rule, specifier }) => ({ file, line, rule, specifier }))).toEqual([
      {
        file: "packages/session-store/package.json",
        line: 7,
        rule: "forbidden-third-party",
        specifier: "@earendil-works/pi-ai",
      },
      {
        file: "packages/session-store/src/index.ts",
        line: 1,
        rule: "forbidden-third-party",
        specifier: "@earendil-works/pi-ai",
      },
      {
        file: "apps/agent/src/main.ts",
        line: 2,
        rule: "forbidden-third-party",
        specifier: "@earendil-works/pi-ai",
      },
    ]);
    expect(violations[1]?.message).toBe(
      'packages/session-store/src/index.ts:1 imports "@earendil-works/pi-ai": ' +
        "pi-ai (@earendil-works/pi-ai) may be used only by runtime-resolver, turn-pipeline, kernel and tooling/*",
    );
  });

  test("a relative import into another package escapes the package; one inside it does not", () => {
    const violations = checkWorkspace(fixture("escapes-package"));
    expect(violations.map(({ file, line, rule, specifier }) => ({ file, line, rule, specifier }))).toEqual([
      {
        file: "packages/tool-policy/src/index.ts",
        line: 1,
        rule: "escapes-package",
        specifier: "../../kernel/src/index.ts",
      },
    ]);
    expect(violations[0]?.message).toBe(
      'packages/tool-policy/src/index.ts:1 imports "../../kernel/src/index.ts", which resolves outside ' +
        "packages/tool-policy: import another package by its name (declared in package.json and allowed by the " +
        "layer table), never by a path into it",
    );
  });

  test("src may not use tooling, by name, by path or as a runtime dependency; tests may", () => {
    expect(summarize(fixture("tooling-import"))).toEqual([
      {
        file: "packages/channels-core/package.json",
        line: 7,
        rule: "tooling-import",
        specifier: "@agent-kernel/fake-llm",
      },
      {
        file: "packages/config/src/index.ts",
        line: 1,
        rule: "tooling-import",
        specifier: "@agent-kernel/fake-llm",
      },
      {
        file: "packages/config/src/paths.ts",
        line: 1,
        rule: "tooling-import",
        specifier: "../../../tooling/fake-llm/src/index.ts",
      },
    ]);
  });

  test("every import form is seen: type-only, side-effect, re-export, multi-line, dynamic, require", () => {
    // not-imports.ts mentions the kernel only in strings, a template and a regular expression.
    expect(summarize(fixture("import-forms"))).toEqual([
      {
        file: "packages/config/src/dynamic.ts",
        line: 1,
        rule: "upward-or-sideways",
        specifier: "@agent-kernel/kernel",
      },
      {
        file: "packages/config/src/multi-line.ts",
        line: 5,
        rule: "upward-or-sideways",
        specifier: "@agent-kernel/kernel",
      },
      {
        file: "packages/config/src/re-exports.ts",
        line: 1,
        rule: "upward-or-sideways",
        specifier: "@agent-kernel/kernel",
      },
      {
        file: "packages/config/src/re-exports.ts",
        line: 2,
        rule: "upward-or-sideways",
        specifier: "@agent-kernel/kernel",
      },
      {
        file: "packages/config/src/re-exports.ts",
        line: 3,
        rule: "upward-or-sideways",
        specifier: "@agent-kernel/kernel/turn",
      },
      {
        file: "packages/config/src/require.cjs",
        line: 1,
        rule: "upward-or-sideways",
        specifier: "@agent-kernel/kernel",
      },
      {
        file: "packages/config/src/side-effect.ts",
        line: 1,
        rule: "upward-or-sideways",
        specifier: "@agent-kernel/kernel/register",
      },
      {
        file: "packages/config/src/type-only.ts",
        line: 1,
        rule: "upward-or-sideways",
        specifier: "@agent-kernel/kernel",
      },
    ]);
  });

  test("commented-out imports are ignored", () => {
    expect(checkWorkspace(fixture("commented-out"))).toEqual([]);
  });

  test("Node builtins are allowed with and without node:, in src and in tests", () => {
    expect(checkWorkspace(fixture("builtins"))).toEqual([]);
  });

  test("a package under packages/ missing from the layer table is reported once", () => {
    expect(checkWorkspace(fixture("unknown-package"))).toEqual([
      {
        packageName: "@agent-kernel/widgets",
        file: "packages/widgets/package.json",
        specifier: "@agent-kernel/widgets",
        rule: "unknown-package",
        message:
          'packages/widgets/package.json: "@agent-kernel/widgets" is not in the layer table, so its layer and ' +
          "allowed dependencies are unknown; add it to the layer table in tooling/layer-check/src/layers.ts",
      },
    ]);
  });

  test("a root that does not exist is an error, not an empty clean workspace", () => {
    expect(() => checkWorkspace(fixture("no-such-fixture"))).toThrow(/does not exist/);
  });
});

describe("packageNameOf", () => {
  test.each([
    ["zod", "zod"],
    ["zod/v4", "zod"],
    ["@agent-kernel/kernel", "@agent-kernel/kernel"],
    ["@agent-kernel/kernel/turn", "@agent-kernel/kernel"],
    ["@earendil-works/pi-ai/dist/index.js", "@earendil-works/pi-ai"],
  ])("%s belongs to %s", (specifier, name) => {
    expect(packageNameOf(specifier)).toBe(name);
  });
});
