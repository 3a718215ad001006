#!/usr/bin/env node
// `agent-kernel-bench [filter] [--json <file>]`: runs every `bench/*.bench.ts`
// of the package in the current directory (each default-exports a suite or a
// list of suites) whose name contains `filter`, prints Markdown tables and
// writes `bench-results.json` beside them (a filtered run replaces only the suites it
// ran there; the same JSON also goes to `--json`'s
// file, which the root `pnpm bench` reads).
// Owns: finding and loading bench files; the timing is harness.ts.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type BenchSuite, formatSuite, runSuite, type SuiteResult } from "./harness.ts";

const SOURCE_CONDITION = "--conditions=@agent-kernel/source";

// Bench files import workspace packages from source, like the tests do.
if (!process.execArgv.includes(SOURCE_CONDITION)) {
  const result = spawnSync(
    process.execPath,
    [SOURCE_CONDITION, "--expose-gc", ...process.execArgv, import.meta.filename, ...process.argv.slice(2)],
    {
      stdio: "inherit",
    },
  );
  process.exit(result.status ?? 1);
}

const dir = process.cwd();
const benchDir = join(dir, "bench");
const { filter, jsonFile } = parseArguments(process.argv.slice(2));
const files = existsSync(benchDir)
  ? readdirSync(benchDir)
      .filter((name) => name.endsWith(".bench.ts") && (filter === undefined || name.includes(filter)))
      .sort()
  : [];
if (files.length === 0) {
  console.error(`agent-kernel-bench: no bench/*.bench.ts in ${dir}`);
  process.exit(1);
}

const packageName = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string }).name;
const results: SuiteResult[] = [];
console.log(`## ${packageName}\n`);
for (const file of files) {
  const module = (await import(pathToFileURL(join(benchDir, file)).href)) as {
    default: BenchSuite | BenchSuite[];
  };
  const suites = Array.isArray(module.default) ? module.default : [module.default];
  for (const suite of suites) {
    const result = await runSuite(suite);
    results.push(result);
    console.log(`${formatSuite(result)}\n`);
  }
}
const report = {
  package: packageName,
  node: process.version,
  date: new Date().toISOString(),
  // a filtered run replaces the suites it ran and keeps the others of the last run (the report reads them all)
  suites: filter === undefined ? results : mergeSuites(join(dir, "bench-results.json"), results),
};
writeFileSync(join(dir, "bench-results.json"), `${JSON.stringify(report, null, 2)}\n`);
if (jsonFile !== undefined) writeFileSync(resolve(dir, jsonFile), `${JSON.stringify(report, null, 2)}\n`);

/** The suites of the last run's results file, each replaced by this run's result of the same name. */
function mergeSuites(file: string, fresh: readonly SuiteResult[]): SuiteResult[] {
  let previous: SuiteResult[] = [];
  try {
    previous = (JSON.parse(readFileSync(file, "utf8")) as { suites?: SuiteResult[] }).suites ?? [];
  } catch {
    // no results yet, or unreadable: this run's suites only
  }
  const ran = new Set(fresh.map((result) => result.suite));
  return [...previous.filter((result) => !ran.has(result.suite)), ...fresh];
}

function parseArguments(args: readonly string[]): { filter?: string; jsonFile?: string } {
  let filter: string | undefined;
  let jsonFile: string | undefined;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === "--json") {
      jsonFile = args[++index];
      if (jsonFile === undefined || jsonFile.startsWith("--")) {
        console.error("agent-kernel-bench: --json needs a file path");
        process.exit(2);
      }
    } else if (arg !== undefined && !arg.startsWith("--")) filter = arg;
  }
  return { ...(filter === undefined ? {} : { filter }), ...(jsonFile === undefined ? {} : { jsonFile }) };
}
