#!/usr/bin/env node
// The README's test command. Owns: running lint, typecheck and every package's
// tests through turbo (cached), then adding up vitest's JSON reports into the
// closing line CI reads: `N passed, N failed`. A lint or typecheck failure, or
// a test task that produced no report, counts as one failure each, so the line
// never says "0 failed" for a red run. Extra arguments go to turbo.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dirname, "..", "..");
const REPORT = ".vitest-results.json";
const packageDirs = ["packages", "apps", "tooling"].flatMap((group) => {
  const dir = join(root, group);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, "package.json")))
    .map((entry) => join(dir, entry.name));
});

// Reports from an earlier run must not be counted: turbo restores them from
// its cache on a hit, and a package whose tests did not run has none.
for (const dir of packageDirs) rmSync(join(dir, REPORT), { force: true });

const extraArgs = process.argv.slice(2);
const filtered = extraArgs.some((arg) => arg === "-F" || arg.startsWith("--filter"));
// Two at a time: each package's vitest already uses every core, and more at once only adds contention.
const turbo = spawnSync(
  "turbo",
  [
    "run",
    "lint",
    "typecheck",
    "test",
    "--continue",
    "--concurrency=2",
    "--output-logs=new-only",
    ...extraArgs,
  ],
  { cwd: root, stdio: "inherit" },
);

let passed = 0;
let failed = 0;
const problems = [];
for (const dir of packageDirs) {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  if (!pkg.scripts?.test) continue;
  const reportPath = join(dir, REPORT);
  if (!existsSync(reportPath)) {
    // With --filter, turbo runs only some packages; the others are not failures.
    if (filtered) continue;
    problems.push(`${relative(root, dir)}: tests did not run (no ${REPORT})`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(reportPath, "utf8"));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  // A test file that fails to load has no failed test in it, only a failed suite.
  const brokenFiles = (report.testResults ?? []).filter(
    (file) => file.status === "failed" && file.assertionResults.every((test) => test.status !== "failed"),
  );
  for (const file of brokenFiles) {
    problems.push(
      `${relative(root, file.name)}: test file failed to run: ${file.message ?? "unknown error"}`,
    );
    failed += 1;
  }
}

if (turbo.status !== 0 && failed === 0) {
  problems.push(
    `turbo exited with ${turbo.status ?? turbo.signal}: a lint or typecheck task failed (see above)`,
  );
  failed += 1;
}

for (const problem of problems) console.log(`FAILED ${problem}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && turbo.status === 0 ? 0 : 1);
