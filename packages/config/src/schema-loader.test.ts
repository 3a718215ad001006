// The lazily built schema (schema-loader.ts) must load in every shape the package runs in: the sources and
// tsc's dist unbundled (the other tests, and the CLI's), and bundled by esbuild — the agent's own bundle of
// the sources, or a third party's bundle of the published dist, in ESM and in CJS. This compiles the package
// as its build does (tsc with tsconfig.build.json, into a folder of its own: the real dist may be stale),
// bundles that and src/index.ts both ways with the esbuild the repo builds the agent with, and validates a
// good and a bad config from each bundle.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = import.meta.dirname;
// esbuild is the agent app's devDependency (tooling/scripts/bundle-bin.mjs bundles with it).
const esbuild = createRequire(join(SRC, "..", "..", "..", "apps", "agent", "package.json"))("esbuild") as {
  buildSync(options: Record<string, unknown>): unknown;
};

const PACKAGE = join(SRC, "..");

/** The package compiled as `build` compiles it (tsconfig.build.json), into a new folder. */
function compiledDist(): string {
  const outDir = mkdtempSync(join(tmpdir(), "agent-kernel-config-dist-"));
  const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
  const flags = ["--declaration", "false", "--declarationMap", "false", "--sourceMap", "false"];
  const run = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", outDir, ...flags], {
    cwd: PACKAGE,
    encoding: "utf8",
    timeout: 240_000,
  });
  if (run.status !== 0) throw new Error(`tsc failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  return outDir;
}

const entryOf = (index: string): string => `
import { ConfigError, parseConfig } from ${JSON.stringify(index)};
const config = parseConfig({ messages: { queue: { cap: 3 } } });
let rejected = "no";
try { parseConfig({ messages: { queue: { cap: "three" } } }); } catch (error) {
  rejected = error instanceof ConfigError ? "ConfigError" : String(error);
}
console.log(JSON.stringify({ cap: config.messages.queue.cap, rejected }));
`;

describe("the schema in an esbuild bundle", () => {
  let dist: string | undefined;
  const distIndex = (): string => {
    if (dist === undefined) dist = compiledDist();
    return join(dist, "index.js");
  };
  const cases = [
    { from: "src", index: () => join(SRC, "index.ts") },
    { from: "dist", index: distIndex },
  ];
  for (const { from, index } of cases)
    for (const format of ["esm", "cjs"] as const) {
      it(`validates from a ${format} bundle of ${from}, the schema behind its lazy initialiser`, () => {
        const dir = mkdtempSync(join(tmpdir(), "agent-kernel-config-bundle-"));
        const entry = join(dir, "entry.mts");
        writeFileSync(entry, entryOf(index()));
        const outfile = join(dir, format === "esm" ? "out.mjs" : "out.cjs");
        esbuild.buildSync({
          entryPoints: [entry],
          bundle: true,
          platform: "node",
          format,
          outfile,
          logLevel: "silent",
          // the compiled copy lives outside the package: its zod and json5 are the package's
          nodePaths: [join(PACKAGE, "node_modules")],
        });
        const bundle = readFileSync(outfile, "utf8");
        // no require left to resolve at run time, and schema.ts kept behind its lazy initialiser
        expect(bundle).not.toMatch(/__require\(["']\.\/schema/);
        expect(bundle).toMatch(/init_schema\(\), __toCommonJS\(schema_exports\)/);
        const run = spawnSync(process.execPath, [outfile], { encoding: "utf8", timeout: 120_000 });
        expect(run.stderr).toBe("");
        expect(JSON.parse(run.stdout)).toEqual({ cap: 3, rejected: "ConfigError" });
      }, 300_000);
    }
});
