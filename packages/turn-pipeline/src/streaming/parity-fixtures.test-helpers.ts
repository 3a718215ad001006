// Loads the OpenClaw parity fixtures recorded by tooling/parity/record/streaming.mjs (test-only helper).
import { readFileSync } from "node:fs";
import { join } from "node:path";

const fixtureDir = join(import.meta.dirname, "../../fixtures/openclaw/streaming");

export function loadFixtureCases<T>(name: string): T[] {
  const parsed = JSON.parse(readFileSync(join(fixtureDir, name), "utf8")) as { cases: T[] };
  return parsed.cases;
}
