// Reads the OpenClaw 2026.9.6 parity fixtures (fixtures/openclaw/*.json, recorded by
// tooling/parity/record/runtime-resolver.mjs). Test support only: nothing in the
// package's face imports it.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface ParityCase {
  readonly fn: string;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly steps?: unknown;
}

const FIXTURE_DIR = join(import.meta.dirname, "..", "fixtures", "openclaw");

function partNumber(file: string): number {
  return Number(/\.part-(\d+)\.json$/.exec(file)?.[1] ?? 0);
}

/** The cases of one fixture (`<name>.json` or its `<name>.part-<n>.json` parts), optionally of one function. */
export function loadParityCases(name: string, fn?: string): ParityCase[] {
  const single = join(FIXTURE_DIR, `${name}.json`);
  const files = existsSync(single)
    ? [single]
    : readdirSync(FIXTURE_DIR)
        .filter((file) => file.startsWith(`${name}.part-`))
        .sort((a, b) => partNumber(a) - partNumber(b))
        .map((file) => join(FIXTURE_DIR, file));
  if (files.length === 0) throw new Error(`no parity fixture "${name}" in ${FIXTURE_DIR}`);
  const cases = files.flatMap(
    (file) => (JSON.parse(readFileSync(file, "utf8")) as { cases: ParityCase[] }).cases,
  );
  return fn === undefined ? cases : cases.filter((c) => c.fn === fn);
}
