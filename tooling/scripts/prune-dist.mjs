#!/usr/bin/env node
// Each package's build ends with this: `tsc -p tsconfig.build.json && node ../../tooling/scripts/prune-dist.mjs`.
// Owns only removing from the package's outDir (dist) every file that no current source emits: the outputs of a
// source that is gone or is a test (`*.test.ts`, excluded from the build), and anything else. tsc never deletes
// output whose source is gone, so without this a release from a working tree published it. Pruning after tsc,
// rather than emptying dist before it, never removes a valid output: builds started at once (two test suites
// each running turbo) and readers of dist never see it missing. Runs in the package directory (pnpm and turbo
// set it) and refuses to run elsewhere.
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const packageDir = process.cwd();
const tsconfigPath = join(packageDir, "tsconfig.build.json");
if (!existsSync(join(packageDir, "package.json")) || !existsSync(tsconfigPath)) {
  console.error(
    `prune-dist: ${packageDir} is not a package directory (no package.json and tsconfig.build.json)`,
  );
  process.exit(1);
}
const { compilerOptions = {} } = JSON.parse(readFileSync(tsconfigPath, "utf8"));
const rootDir = join(packageDir, compilerOptions.rootDir ?? "src");
const outDir = join(packageDir, compilerOptions.outDir ?? "dist");
if (!existsSync(outDir)) process.exit(0);

const TSC_OUTPUT = /(\.d\.ts\.map|\.d\.ts|\.js\.map|\.js)$/;
// A bundled command (bundle-bin.mjs, run after this) lists its files in dist/bundle.json and replaces them itself.
const BUNDLE_LIST = "bundle.json";
const bundleListPath = join(outDir, BUNDLE_LIST);
const hasBundle = existsSync(bundleListPath);
const bundled = new Set(hasBundle ? JSON.parse(readFileSync(bundleListPath, "utf8")).outputs : []);
// In a bundled package, a file younger than this is kept even when the list does not name it: a build running
// at the same time may have written its chunks (or be about to rename its temporary files) under a list another
// build replaced. bundle-bin.mjs keeps a previous build's chunks as long.
const BUNDLE_GRACE_MS = 15 * 60_000;
const now = Date.now();
const removed = [];
const directories = [];
for (const entry of readdirSync(outDir, { recursive: true, withFileTypes: true })) {
  const path = join(entry.parentPath, entry.name);
  if (entry.isDirectory()) {
    directories.push(path);
    continue;
  }
  const output = relative(outDir, path);
  if (output === BUNDLE_LIST || bundled.has(output)) continue;
  const base = output.replace(TSC_OUTPUT, "");
  const emitted = base !== output && !base.endsWith(".test") && existsSync(join(rootDir, `${base}.ts`));
  if (emitted) continue;
  if (hasBundle && now - statSync(path, { throwIfNoEntry: false })?.mtimeMs < BUNDLE_GRACE_MS) continue;
  rmSync(path, { force: true });
  removed.push(output);
}
// deepest first, so a directory emptied by its subdirectories' removal goes too
for (const directory of directories.sort((a, b) => b.length - a.length)) {
  if (readdirSync(directory).length === 0) rmdirSync(directory);
}
if (removed.length > 0) {
  console.log(`prune-dist: removed ${removed.length} files no source emits: ${removed.sort().join(", ")}`);
}
