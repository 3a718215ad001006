// Which entry points the API reference covers. Owns: reading every published package's `exports` map (packages/*
// and apps/*, not private) into one entry point per subpath that has types. Does not own: extracting or documenting
// them (extract.ts, generate.ts).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const REPO_ROOT = join(import.meta.dirname, "..", "..", "..");

export interface EntryPoint {
  /** The package's name, e.g. `@agent-kernel/kernel`. */
  readonly packageName: string;
  /** The package directory relative to the repo root, e.g. `packages/kernel`. */
  readonly packageDir: string;
  /** The subpath in `exports`: `.`, `./admin`, `./postgres/testing`. */
  readonly subpath: string;
  /** What a consumer imports: `@agent-kernel/kernel`, `@agent-kernel/kernel/admin`. */
  readonly importName: string;
  /** The built declaration file, relative to the package directory, e.g. `dist/admin.d.ts`. */
  readonly types: string;
}

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly exports?: Record<string, string | Record<string, string>>;
}

/** The directory (under docs/api) that holds a package's reference: its unscoped name, e.g. `kernel`. */
export function docsFolderName(packageName: string): string {
  return packageName.replace(/^@[^/]+\//, "");
}

/** Every published package's typed entry points, in a stable order (package directory, then subpath). */
export function publishedEntryPoints(root: string = REPO_ROOT): EntryPoint[] {
  const entries: EntryPoint[] = [];
  for (const group of ["packages", "apps"]) {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) continue;
    const names = readdirSync(groupDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(groupDir, entry.name, "package.json")))
      .map((entry) => entry.name)
      .sort();
    for (const name of names) {
      const packageDir = `${group}/${name}`;
      const manifest = JSON.parse(readFileSync(join(root, packageDir, "package.json"), "utf8")) as Manifest;
      if (manifest.private) continue;
      if (manifest.exports === undefined) {
        throw new Error(`${packageDir}/package.json: a published package needs an "exports" map`);
      }
      for (const [subpath, target] of Object.entries(manifest.exports)) {
        if (typeof target === "string") continue; // ./package.json, ./config.schema.json: no types
        const types = target.types;
        if (types === undefined) {
          throw new Error(`${packageDir}/package.json: exports["${subpath}"] has no "types" condition`);
        }
        entries.push({
          packageName: manifest.name,
          packageDir,
          subpath,
          importName: subpath === "." ? manifest.name : `${manifest.name}/${subpath.replace(/^\.\//, "")}`,
          types: types.replace(/^\.\//, ""),
        });
      }
    }
  }
  return entries;
}
