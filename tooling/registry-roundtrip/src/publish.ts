// The release path, run for real against a local registry: a scratch copy of the workspace (every
// package's built dist and what its manifest ships, the changesets, the root manifests), then
// `changeset version` and `changeset publish` there, as a maintainer would run them. Owns: the scratch copy
// and the commands' environment. Does not own: building (the test runs turbo first) or the registry.
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { delimiter, dirname, join } from "node:path";

export const REPO_ROOT = join(import.meta.dirname, "..", "..", "..");

export interface WorkspacePackage {
  readonly name: string;
  readonly dir: string;
  readonly private: boolean;
  readonly bin: Readonly<Record<string, string>>;
}

/** Every workspace package (packages/*, apps/*, tooling/*) of `root`, from its manifest. */
export function workspacePackages(root: string = REPO_ROOT): WorkspacePackage[] {
  return ["packages", "apps", "tooling"].flatMap((group) =>
    readdirSync(join(root, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(root, group, entry.name, "package.json")))
      .map((entry) => {
        const dir = join(group, entry.name);
        const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as {
          name: string;
          private?: boolean;
          bin?: Record<string, string>;
        };
        return { name: manifest.name, dir, private: manifest.private === true, bin: manifest.bin ?? {} };
      }),
  );
}

/** The PATH a child needs: this Node first (never the machine's older one), then pnpm, then the rest. */
export function toolPath(...extra: string[]): string {
  return [...extra, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter);
}

const SKIPPED = new Set([
  "node_modules",
  ".turbo",
  "test",
  "bench",
  "bench-results.json",
  ".vitest-results.json",
]);

/**
 * A copy of the workspace at `scratch` that changesets and pnpm can version and publish: public packages
 * whole (minus node_modules, tests, benchmarks), private ones as their manifest only (changesets checks
 * that its `ignore` list names real packages). The root's node_modules is linked, for the changelog module.
 */
export function copyWorkspace(scratch: string): void {
  mkdirSync(scratch, { recursive: true });
  for (const file of ["package.json", "pnpm-workspace.yaml", "LICENSE"]) {
    cpSync(join(REPO_ROOT, file), join(scratch, file));
  }
  cpSync(join(REPO_ROOT, ".changeset"), join(scratch, ".changeset"), { recursive: true });
  for (const pkg of workspacePackages()) {
    const from = join(REPO_ROOT, pkg.dir);
    const to = join(scratch, pkg.dir);
    if (pkg.private) {
      mkdirSync(to, { recursive: true });
      cpSync(join(from, "package.json"), join(to, "package.json"));
      continue;
    }
    cpSync(from, to, {
      recursive: true,
      filter: (source) => {
        const relative = source.slice(from.length + 1);
        return !SKIPPED.has(relative.split("/")[0] ?? "") && !isStaleOutput(from, relative);
      },
    });
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(scratch, "node_modules"), "dir");
}

/**
 * A file tsc once emitted into dist/ for a source that is gone: tsc never deletes outputs, and turbo restores
 * a cached dist over what is there. A release from a fresh clone has none; the scratch copy leaves them out
 * to match it.
 */
function isStaleOutput(packageDir: string, relative: string): boolean {
  const output = /^dist\/(.+?)(?:\.d)?\.(?:js|ts)(?:\.map)?$/.exec(relative);
  if (output === null) return false;
  if (bundleOutputs(packageDir).includes(relative.slice("dist/".length))) return false;
  return !existsSync(join(packageDir, "src", `${output[1]}.ts`));
}

/** The files a bundled command's build wrote into dist/ (tooling/scripts/bundle-bin.mjs lists them in dist/bundle.json). */
export function bundleOutputs(packageDir: string): string[] {
  const list = join(packageDir, "dist", "bundle.json");
  return existsSync(list) ? (JSON.parse(readFileSync(list, "utf8")) as { outputs: string[] }).outputs : [];
}

/** Points pnpm and npm in `scratch` at the registry, with the token to publish. */
export function useRegistry(scratch: string, registryUrl: string, token: string): void {
  const host = registryUrl.replace(/^https?:/, "");
  writeFileSync(join(scratch, ".npmrc"), `registry=${registryUrl}\n${host}:_authToken=${token}\n`);
}

export interface CommandResult {
  readonly status: number | null;
  readonly output: string;
}

/** Runs the repo's changesets CLI in `scratch` (`version`, `publish`, `status`...). */
export function changeset(scratch: string, args: readonly string[], registryUrl: string): CommandResult {
  const bin = join(REPO_ROOT, "node_modules", "@changesets", "cli", "bin.js");
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd: scratch,
    encoding: "utf8",
    timeout: 300_000,
    env: {
      ...process.env,
      PATH: toolPath(),
      NODE_OPTIONS: "",
      CI: "true",
      npm_config_registry: registryUrl,
      npm_config_userconfig: join(scratch, ".npmrc"),
      pnpm_config_registry: registryUrl,
    },
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}
