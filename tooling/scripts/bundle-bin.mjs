#!/usr/bin/env node
// An app's command as one bundle: `node ../../tooling/scripts/bundle-bin.mjs <entry.ts> [--external <name>]…`,
// run in the package directory after `tsc` and prune-dist.mjs (the `build` script). Owns: bundling the entry
// (workspace packages from their sources, their pure-JS dependencies inlined) into dist/<entry>.js — the file
// tsc emitted there is replaced — with its lazily imported parts as chunks beside it, a linked source map for
// each (`node --enable-source-maps` names the .ts files), the list of what it wrote (dist/bundle.json: the
// next build replaces exactly those; prune-dist.mjs leaves them alone), and the resolution of the packages
// left external. Does not own: the type declarations and the library face (tsc's output), or deciding what
// must stay external (the caller names it: native modules, packages reading files beside themselves).
//
// Why: a command that imports ~400 small modules spends a fifth of a second resolving and linking them on every
// start; one file costs one. Chunks sit flat in dist/ so `new URL("../package.json", import.meta.url)` in the
// bundled code still names the package's manifest.
//
// The external packages are imports of the bundled workspace packages, declared in *their* manifests, not the
// app's (an app reaches the pi SDK only through the kernel). Node resolves a bare name from the importing
// file's directory, which is now the app's dist/, so unless every one of them resolves from there (the app
// declares them too, or they are hoisted where it sees them: then nothing is registered) the bundle's entry
// registers a resolve hook: a bare name imported or required from the bundle that the app cannot resolve is
// resolved from the bundled workspace packages (each found through the one that depends on it, from the app's
// own dependencies on), as it was before bundling. Everything else resolves exactly as Node does.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, relative } from "node:path";

const USAGE = "usage: bundle-bin.mjs <entry.ts> [--external <package or pattern>]…";
const packageDir = process.cwd();
const manifestPath = join(packageDir, "package.json");
if (!existsSync(manifestPath)) {
  console.error(`bundle-bin: ${packageDir} is not a package directory (no package.json)`);
  process.exit(1);
}
const args = process.argv.slice(2);
const entry = args.shift();
const external = [];
while (args.length > 0) {
  const flag = args.shift();
  const value = args.shift();
  if (flag !== "--external" || value === undefined) {
    console.error(`bundle-bin: unexpected argument ${JSON.stringify(flag)}\n${USAGE}`);
    process.exit(2);
  }
  external.push(value);
}
if (entry === undefined || !entry.endsWith(".ts") || !existsSync(join(packageDir, entry))) {
  console.error(
    `bundle-bin: the entry must be an existing .ts file in the package, got ${JSON.stringify(entry)}\n${USAGE}`,
  );
  process.exit(2);
}

// esbuild is the app's devDependency: resolved from the package, not from this script's directory.
const requireFromPackage = createRequire(manifestPath);
const esbuild = requireFromPackage("esbuild");
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
const outDir = join(packageDir, "dist");
const entryName = basename(entry, ".ts");
const WORKSPACE_SCOPE = "@agent-kernel/";

/**
 * Every workspace package the app reaches at runtime, each with the chain of packages that leads to it from the
 * app (breadth first: the shortest chain, the app's own dependencies first). The hook resolves an external from
 * these, in this order.
 */
function workspaceChains() {
  const chains = [];
  const seen = new Set();
  const queue = runtimeDependencies(manifest)
    .filter((name) => name.startsWith(WORKSPACE_SCOPE))
    .map((name) => [name]);
  const requireFrom = new Map([[undefined, requireFromPackage]]);
  while (queue.length > 0) {
    const chain = queue.shift();
    const name = chain.at(-1);
    if (seen.has(name)) continue;
    seen.add(name);
    chains.push(chain);
    const parentRequire = requireFrom.get(chain.at(-2)) ?? requireFromPackage;
    const childManifestPath = parentRequire.resolve(`${name}/package.json`);
    requireFrom.set(name, createRequire(childManifestPath));
    const childManifest = JSON.parse(readFileSync(childManifestPath, "utf8"));
    for (const dependency of runtimeDependencies(childManifest)) {
      if (dependency.startsWith(WORKSPACE_SCOPE) && !seen.has(dependency)) queue.push([...chain, dependency]);
    }
  }
  return chains;
}

function runtimeDependencies(packageManifest) {
  return Object.keys({ ...packageManifest.peerDependencies, ...packageManifest.dependencies });
}

/**
 * The external packages the bundled code needs wherever it runs: every name matching an `--external` that the
 * app or a bundled workspace package declares as a dependency or a peer that is not optional. When each of
 * them resolves from the app itself (it declares them too, or they are hoisted where it can see them), the
 * hook is not registered at all: a registered resolve hook costs every resolution in the process, pi's ~1,700
 * modules included (≈ 2 % of a bare pi turn's instructions, measured with a hook that only passes through).
 */
function neededExternals(chains) {
  const patterns = external.map(
    (pattern) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`),
  );
  const manifests = [manifest];
  for (const chain of chains) {
    let require = requireFromPackage;
    for (const name of chain) {
      const path = require.resolve(`${name}/package.json`);
      require = createRequire(path);
      if (name === chain.at(-1)) manifests.push(JSON.parse(readFileSync(path, "utf8")));
    }
  }
  const needed = new Set();
  for (const packageManifest of manifests) {
    const optional = packageManifest.peerDependenciesMeta ?? {};
    for (const name of runtimeDependencies(packageManifest)) {
      if (optional[name]?.optional === true && packageManifest.dependencies?.[name] === undefined) continue;
      if (name.startsWith(WORKSPACE_SCOPE) || !patterns.some((pattern) => pattern.test(name))) continue;
      needed.add(name);
    }
  }
  return [...needed].sort();
}

// The resolve hook, first in the entry (before anything else is imported). Kept tiny: it runs for every
// resolution in the process, pi's included; only bare names asked for from the bundle's own files are looked at.
const chains = workspaceChains();
const resolveHook = `// bundle-bin.mjs: externals resolve from the workspace packages that import them (see that script)
import { createRequire, registerHooks } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
const bundleDir = new URL(".", import.meta.url).href;
const chains = ${JSON.stringify(chains)};
const needed = ${JSON.stringify(neededExternals(chains))};
const packageUrls = new Map();
function packageUrl(chain, context, nextResolve) {
  const name = chain.at(-1);
  let url = packageUrls.get(name);
  if (url === undefined) {
    const parentURL = chain.length === 1 ? import.meta.url : packageUrl(chain.slice(0, -1), context, nextResolve);
    url = nextResolve(name + "/package.json", { ...context, parentURL }).url;
    packageUrls.set(name, url);
  }
  return url;
}
/** Whether a bare name resolves from the bundle's own folder (a package without a "." export still counts). */
function resolvesHere(name) {
  try {
    import.meta.resolve(name);
    return true;
  } catch (error) {
    return error?.code !== "ERR_MODULE_NOT_FOUND";
  }
}
if (!needed.every(resolvesHere)) registerHooks({
  resolve(specifier, context, nextResolve) {
    const fromBundle = context.parentURL?.startsWith(bundleDir) && !/^(\\.|\\/|[a-z]+:)/.test(specifier);
    if (!fromBundle) return nextResolve(specifier, context);
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (error?.code !== "ERR_MODULE_NOT_FOUND" && error?.code !== "MODULE_NOT_FOUND") throw error;
      // require() resolves from the requiring module whatever parentURL says: ask a require made there
      const required = context.conditions?.includes("require");
      for (const chain of chains) {
        try {
          const parentURL = packageUrl(chain, context, nextResolve);
          if (!required) return nextResolve(specifier, { ...context, parentURL });
          const path = createRequire(fileURLToPath(parentURL)).resolve(specifier);
          return { url: pathToFileURL(path).href, shortCircuit: true };
        } catch {}
      }
      throw error;
    }
  },
});
`;

const HOOK = "bundle-bin:resolve-hook";
const ENTRY = "bundle-bin:entry";
mkdirSync(outDir, { recursive: true });
const result = await esbuild.build({
  entryPoints: { [entryName]: ENTRY },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  // workspace packages from their sources (their exports maps name src/ under this condition)
  conditions: ["@agent-kernel/source"],
  outdir: outDir,
  splitting: true,
  chunkNames: `${entryName}-[name]-[hash]`,
  // Whitespace and comments out (names kept, so stack traces still name functions; the source map has the
  // rest): V8 reads, checksums (the compile cache) and scans the source of every function it compiles lazily,
  // so a start pays for the bytes it loads, not only for the code it runs.
  minifyWhitespace: true,
  sourcemap: "linked",
  sourcesContent: false,
  external,
  metafile: true,
  // written below, in an order that never shows a reader an entry without its chunks
  write: false,
  logLevel: "warning",
  plugins: [
    {
      name: "bundle-bin-entry",
      setup(build) {
        build.onResolve({ filter: /^bundle-bin:/ }, (args) => ({ path: args.path, namespace: "bundle-bin" }));
        build.onLoad({ filter: /.*/, namespace: "bundle-bin" }, (args) =>
          args.path === HOOK
            ? { contents: resolveHook, loader: "js" }
            : {
                contents: `import ${JSON.stringify(HOOK)};\nimport ${JSON.stringify(`./${entry}`)};\n`,
                loader: "js",
                resolveDir: packageDir,
              },
        );
      },
    },
  ],
});

// Builds of this package can run at once (two test suites each running turbo, each with the working tree as it
// is then, so their chunks may differ) while other processes run the command. So: the list first (a concurrent
// prune-dist.mjs keeps what it names), then the chunks, then the entry by an atomic rename; and a previous
// build's chunks stay listed, and on disk, for STALE_GRACE_MS after they were written — an entry written by
// a concurrent build, or a process started from it, still finds its own.
const STALE_GRACE_MS = 15 * 60_000;
const entryFile = `${entryName}.js`;
const files = result.outputFiles.map((file) => ({ ...file, output: relative(outDir, file.path) }));
const outputs = files.map((file) => file.output).sort();
const listPath = join(outDir, "bundle.json");
const previous = existsSync(listPath) ? JSON.parse(readFileSync(listPath, "utf8")).outputs : [];
const now = Date.now();
const retained = [];
const expired = [];
for (const stale of previous.filter((output) => !outputs.includes(output))) {
  const path = join(outDir, stale);
  if (!existsSync(path)) continue;
  if (now - statSync(path).mtimeMs < STALE_GRACE_MS) retained.push(stale);
  else expired.push(stale);
}
writeAtomically(
  listPath,
  `${JSON.stringify({ entry: entryFile, outputs: [...outputs, ...retained].sort() }, null, 2)}\n`,
);
const isEntry = (file) => file.output === entryFile || file.output === `${entryFile}.map`;
for (const file of [...files.filter((file) => !isEntry(file)), ...files.filter(isEntry)]) {
  writeAtomically(file.path, file.contents);
}
for (const stale of expired) rmSync(join(outDir, stale), { force: true });

/** Writes `path` whole or not at all (a temporary file beside it, renamed over it). */
function writeAtomically(path, contents) {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

// For looking into what the entry loads (which module pulls in which): BUNDLE_BIN_METAFILE=<file> writes
// esbuild's metafile there (https://esbuild.github.io/api/#metafile).
if (process.env.BUNDLE_BIN_METAFILE)
  writeFileSync(process.env.BUNDLE_BIN_METAFILE, JSON.stringify(result.metafile));

const bundled = Object.keys(result.metafile.inputs).filter(
  (input) => !input.startsWith("bundle-bin:"),
).length;
console.log(
  `bundle-bin: ${entry} → dist/${entryName}.js and ${outputs.length / 2 - 1} chunks (${bundled} modules)`,
);
