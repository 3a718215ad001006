// Tests of the command line as CI runs it: a child `node src/cli.ts <root>`,
// its output and exit code. Does not own the rules (layer-check.test.ts).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, test } from "vitest";

const CLI = join(import.meta.dirname, "cli.ts");
const fixture = (name: string): string => join(import.meta.dirname, "..", "fixtures", name);

// Node runs the TypeScript source directly (type stripping); no build is involved.
const runCli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });

describe("node src/cli.ts", () => {
  test("prints each violation and the count, and exits 1", () => {
    const run = runCli(fixture("upward-import"));
    expect(run.stdout).toBe(
      'packages/config/src/index.ts:3 imports "@agent-kernel/kernel": config (layer 0) may depend only on: (none)\n' +
        "layer check: 1 package, 1 violation\n",
    );
    expect(run.status).toBe(1);
  });

  test("exits 0 on a clean workspace", () => {
    const run = runCli(fixture("clean"));
    expect(run.stdout).toBe("layer check: 10 packages, 0 violations\n");
    expect(run.status).toBe(0);
  });

  test("checks this repository when no root is given", () => {
    const run = runCli();
    expect(run.stdout).toMatch(/^layer check: \d+ packages?, 0 violations\n$/);
    expect(run.status).toBe(0);
  });

  test("exits 2 when the root does not exist", () => {
    const run = runCli(fixture("no-such-fixture"));
    expect(run.stderr).toContain("does not exist");
    expect(run.status).toBe(2);
  });
});
