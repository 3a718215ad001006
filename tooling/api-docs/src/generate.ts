// The API reference as files. Owns: running API Extractor over every published entry point, API Documenter over
// the doc models, and laying its flat output out as docs/api/<package>/ (links rewritten to match), plus an index
// of packages with their descriptions; reading and writing such a tree. Does not own: what counts as a failure
// (api-docs.test.ts) or the allowlist (allowlist.ts).
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { docsFolderName, type EntryPoint, publishedEntryPoints, REPO_ROOT } from "./entry-points.ts";
import { documentedPackageName, type EntryPointReport, extractEntryPoints } from "./extract.ts";

export const DOCS_DIR = join(REPO_ROOT, "docs", "api");
export const REGENERATE_COMMAND = "tooling/pnpm --filter @agent-kernel/api-docs run generate";

/** A generated reference: file path relative to docs/api (always with `/`) → content. */
export type DocsTree = Map<string, string>;

export interface ApiDocs {
  readonly reports: readonly EntryPointReport[];
  readonly files: DocsTree;
}

const DOCUMENTER_CLI = join(
  dirname(createRequire(import.meta.url).resolve("@microsoft/api-documenter/package.json")),
  "bin",
  "api-documenter",
);

/** Builds every published package with turbo (cached), so API Extractor reads types made from today's sources. */
export function buildPublishedPackages(): void {
  const build = spawnSync(
    join(REPO_ROOT, "tooling", "pnpm"),
    [
      "exec",
      "turbo",
      "run",
      "build",
      "--filter=./packages/*",
      "--filter=./apps/*",
      "--output-logs=errors-only",
    ],
    { cwd: REPO_ROOT, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } },
  );
  if (build.status !== 0) throw new Error(`building the packages failed:\n${build.stdout}\n${build.stderr}`);
}

/** Extracts every entry point and renders the reference; `workDir` (emptied) holds the intermediate files. */
export function generateApiDocs(
  workDir: string,
  entries: readonly EntryPoint[] = publishedEntryPoints(),
): ApiDocs {
  rmSync(workDir, { recursive: true, force: true });
  const modelDir = join(workDir, "model");
  const markdownDir = join(workDir, "markdown");
  const reports = extractEntryPoints(entries, modelDir);
  const errors = reports.flatMap((report) =>
    report.errors.map((error) => `${report.entry.importName}: ${error}`),
  );
  if (errors.length > 0) throw new Error(`API Extractor failed:\n${errors.join("\n")}`);
  rmSync(join(modelDir, "reports"), { recursive: true, force: true }); // API Documenter reads every file here
  const documenter = spawnSync(
    process.execPath,
    [DOCUMENTER_CLI, "markdown", "-i", modelDir, "-o", markdownDir],
    {
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "" },
    },
  );
  if (documenter.status !== 0) {
    throw new Error(`api-documenter failed:\n${documenter.stdout}\n${documenter.stderr}`);
  }
  return { reports, files: layOut(readTree(markdownDir), entries) };
}

/**
 * API Documenter writes one flat folder: `index.md`, then `<page>.md` and `<page>.<item>...md` for each package
 * page (`kernel`, and `kernel_admin` for the `./admin` subpath). Each page's files move to the package's folder
 * (`kernel/`), links follow them, subpath names are shown as consumers import them, and the index is ours.
 */
function layOut(flat: DocsTree, entries: readonly EntryPoint[]): DocsTree {
  const folderOfPage = new Map<string, string>();
  const renames: [string, string][] = [];
  for (const entry of entries) {
    const page = docsFolderName(documentedPackageName(entry));
    folderOfPage.set(page, docsFolderName(entry.packageName));
    if (entry.subpath === ".") continue;
    const shown = documentedPackageName(entry).replaceAll("_", "\\_");
    renames.push([
      `## ${docsFolderName(shown)} package`,
      `## ${entry.importName} (entry point of ${entry.packageName})`,
    ]);
    renames.push([shown, entry.importName]);
  }
  const folderOf = (file: string): string => {
    const folder = folderOfPage.get(file.slice(0, file.indexOf(".")));
    if (folder === undefined)
      throw new Error(`api-documenter wrote ${file}, which belongs to no entry point`);
    return folder;
  };
  const laidOut: DocsTree = new Map();
  for (const [file, content] of flat) {
    if (file === "index.md") continue;
    const folder = folderOf(file);
    let text = content.replace(/\]\(\.\/([^)]+\.md)\)/g, (_link, target: string) => {
      if (target === "index.md") return "](../index.md)";
      const targetFolder = folderOf(target);
      return targetFolder === folder ? `](./${target})` : `](../${targetFolder}/${target})`;
    });
    for (const [from, to] of renames) text = text.replaceAll(from, to);
    laidOut.set(`${folder}/${file}`, text);
  }
  laidOut.set("index.md", indexPage(entries));
  return laidOut;
}

function indexPage(entries: readonly EntryPoint[]): string {
  const lines = [
    "<!-- Generated by tooling/api-docs from the packages' doc comments; do not edit. -->",
    "",
    "# API reference",
    "",
    `Every published entry point, from the doc comments in the sources. Regenerate with \`${REGENERATE_COMMAND}\`.`,
    "",
    "| import | what it is |",
    "| --- | --- |",
  ];
  for (const entry of entries) {
    const folder = docsFolderName(entry.packageName);
    const page = `${docsFolderName(documentedPackageName(entry))}.md`;
    const description =
      entry.subpath === "."
        ? ((
            JSON.parse(readFileSync(join(REPO_ROOT, entry.packageDir, "package.json"), "utf8")) as {
              description?: string;
            }
          ).description ?? "")
        : `the \`${entry.subpath}\` entry point of ${entry.packageName}`;
    lines.push(`| [${entry.importName}](./${folder}/${page}) | ${description.replaceAll("|", "\\|")} |`);
  }
  return `${lines.join("\n")}\n`;
}

/** Every file under `dir`, by path relative to it. */
export function readTree(dir: string): DocsTree {
  const tree: DocsTree = new Map();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    tree.set(path.slice(dir.length + 1).replaceAll("\\", "/"), readFileSync(path, "utf8"));
  }
  return tree;
}

/** Replaces everything in `dir` with `tree`. */
export function writeTree(dir: string, tree: DocsTree): void {
  rmSync(dir, { recursive: true, force: true });
  for (const [file, content] of tree) {
    const path = join(dir, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}

/** The paths whose content differs between `expected` and `actual` (missing on either side included), sorted. */
export function differingFiles(expected: DocsTree, actual: DocsTree): string[] {
  const paths = new Set([...expected.keys(), ...actual.keys()]);
  return [...paths].filter((path) => expected.get(path) !== actual.get(path)).sort();
}
