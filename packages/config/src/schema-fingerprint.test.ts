// The validation cache's key (load-cached.ts) is only as good as the fingerprint: it must change whenever the
// code that decides a config's validity or its defaults does. This recomputes it from that code — every module
// load.ts reaches, and the zod and json5 versions — and fails, saying what to write, when the constant is stale.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_SCHEMA_FINGERPRINT } from "./schema-fingerprint.ts";

const SRC = import.meta.dirname;
const PACKAGE = join(SRC, "..");

/** load.ts and every module of this package it imports, directly or not (type-only imports too). */
function validationModules(): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(SRC, file), "utf8");
    for (const match of text.matchAll(/from "\.\/([a-z0-9-]+\.ts)"/g)) visit(match[1] as string);
  };
  visit("load.ts");
  return [...seen].sort();
}

function fingerprint(): string {
  const hash = createHash("sha256");
  for (const name of ["zod", "json5"]) {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, "node_modules", name, "package.json"), "utf8"));
    hash.update(`${name}@${manifest.version}\n`);
  }
  for (const file of validationModules()) hash.update(`${file}\n`).update(readFileSync(join(SRC, file)));
  return hash.digest("hex").slice(0, 32);
}

describe("CONFIG_SCHEMA_FINGERPRINT", () => {
  it("covers the schema, the defaults and the loader", () => {
    const modules = validationModules();
    for (const file of ["schema.ts", "schema-primitives.ts", "defaults.ts", "env.ts", "load.ts"]) {
      expect(modules).toContain(file);
    }
    expect(modules).not.toContain("schema-fingerprint.ts");
  });

  it("is the hash of the code that validates a config (update src/schema-fingerprint.ts when it fails)", () => {
    expect(CONFIG_SCHEMA_FINGERPRINT, "write this value into src/schema-fingerprint.ts").toBe(fingerprint());
  });
});
