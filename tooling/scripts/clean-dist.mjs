#!/usr/bin/env node
// Each package's build starts with this: `node ../../tooling/scripts/clean-dist.mjs && tsc -p tsconfig.build.json`.
// Owns only removing the package's `dist` (in the working directory, which pnpm and turbo set to the package),
// because tsc never deletes output whose source is gone (and `tsc -b --clean` deletes only the outputs of the
// sources that exist): a release from a working tree must publish only what today's sources make. Refuses to
// run outside a package directory, so a mistyped path cannot remove anything else.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";

const packageDir = process.cwd();
if (!existsSync(join(packageDir, "package.json")) || !existsSync(join(packageDir, "tsconfig.build.json"))) {
  console.error(
    `clean-dist: ${packageDir} is not a package directory (no package.json and tsconfig.build.json)`,
  );
  process.exit(1);
}
rmSync(join(packageDir, "dist"), { recursive: true, force: true });
