// The `pnpm layers` command. Owns: choosing the root (argv[2], else this
// repository), printing each violation and a closing count, and the exit code
// (0 clean, 1 violations, 2 the check could not run). Does not own the rules.
import { resolve } from "node:path";
import { runLayerCheck } from "./layer-check.ts";

// src/ → tooling/layer-check/ → tooling/ → the repository root.
const REPO_ROOT = resolve(import.meta.dirname, "..", "..", "..");

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

const rootDir = process.argv[2] === undefined ? REPO_ROOT : resolve(process.argv[2]);
try {
  const { packages, violations } = runLayerCheck(rootDir);
  for (const violation of violations) console.log(violation.message);
  console.log(
    `layer check: ${plural(packages.length, "package")}, ${plural(violations.length, "violation")}`,
  );
  process.exitCode = violations.length === 0 ? 0 : 1;
} catch (error) {
  console.error(
    `layer check could not run on ${rootDir}: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exitCode = 2;
}
