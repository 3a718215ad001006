// API Extractor over one built entry point. Owns: the API Extractor configuration (no api-extractor.json files in
// the packages: one configuration here for all of them), writing the entry point's doc model (`.api.json`) and
// collecting which of its exports have no doc comment (`ae-undocumented`). Does not own: which entry points exist
// (entry-points.ts) or the Markdown (generate.ts).
//
// API Extractor bundles its own TypeScript (6.x) and reads only the `.d.ts` files tsc 7 emitted, so the packages
// must be built first. `ae-undocumented` is raised for top-level exports and for their members alike; only
// top-level exports are held to it (a member's doc is welcome, not required), and they are told apart by the doc
// model: a message is about an export when the entry point exports that name from that source file.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
} from "@microsoft/api-extractor";
import { type EntryPoint, REPO_ROOT } from "./entry-points.ts";

export interface UndocumentedExport {
  /** The exported name. */
  readonly name: string;
  /** Where it is declared, relative to the repo root (the `.ts` source, through the declaration maps). */
  readonly location: string;
}

export interface EntryPointReport {
  readonly entry: EntryPoint;
  /** The doc model written for API Documenter, named after the entry point. */
  readonly apiJsonPath: string;
  /** Top-level exports without a doc comment (or one with no summary), sorted by name. */
  readonly undocumentedExports: readonly UndocumentedExport[];
  /** How many members (properties, methods, enum members) of exports have no doc comment: shown, not enforced. */
  readonly undocumentedMembers: number;
  /** Errors API Extractor or its compiler raised (a `.d.ts` that does not compile, a missing file). */
  readonly errors: readonly string[];
}

// The compiler options API Extractor's TypeScript reads the built `.d.ts` with: what a strict consumer would use,
// without the `@agent-kernel/source` condition, so imports of sibling packages resolve to their built types too.
const CONSUMER_COMPILER_OPTIONS = {
  target: "es2023",
  lib: ["es2023"],
  module: "nodenext",
  moduleResolution: "nodenext",
  types: ["node"],
  strict: true,
  skipLibCheck: true,
};

interface ApiJsonItem {
  readonly kind: string;
  readonly name?: string;
  readonly fileUrlPath?: string;
  readonly members?: readonly ApiJsonItem[];
}

interface ApiJsonPackage extends ApiJsonItem {
  name: string;
}

/** A file name for the entry point's doc model: `kernel.api.json`, `kernel_admin.api.json`. */
export function apiJsonFileName(entry: EntryPoint): string {
  return `${entry.importName.replace(/^@[^/]+\//, "").replaceAll("/", "_")}.api.json`;
}

function prepareConfig(entry: EntryPoint, outDir: string, root: string): ExtractorConfig {
  const projectFolder = join(root, entry.packageDir);
  const reportDir = join(outDir, "reports");
  mkdirSync(reportDir, { recursive: true });
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder,
      mainEntryPointFilePath: join(projectFolder, entry.types),
      compiler: {
        overrideTsconfig: { compilerOptions: CONSUMER_COMPILER_OPTIONS, files: [entry.types] },
      },
      // the API report is not kept (the Markdown is), but only its generator raises ae-undocumented
      apiReport: {
        enabled: true,
        reportFolder: reportDir,
        reportTempFolder: reportDir,
        reportFileName: apiJsonFileName(entry).replace(/\.api\.json$/, ""),
      },
      docModel: { enabled: true, apiJsonFilePath: join(outDir, apiJsonFileName(entry)) },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning },
          "ae-undocumented": { logLevel: ExtractorLogLevel.Warning },
          // release tags (@public, @beta) are not used here: everything exported is public
          "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None },
        },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: join(projectFolder, "package.json"),
  });
}

/**
 * Runs API Extractor on the built types of `entries` (in the repo at `root`); the doc models go to `outDir`. One
 * TypeScript program holds every entry point, so the `.d.ts` files they share are parsed and checked once.
 */
export function extractEntryPoints(
  entries: readonly EntryPoint[],
  outDir: string,
  root: string = REPO_ROOT,
): EntryPointReport[] {
  const configs = entries.map((entry) => prepareConfig(entry, outDir, root));
  const [first] = configs;
  if (first === undefined) return [];
  const compilerState = CompilerState.create(first, {
    additionalEntryPoints: configs.slice(1).map((config) => config.mainEntryPointFilePath),
  });
  return entries.map((entry, index) => {
    const config = configs[index];
    if (config === undefined) throw new Error(`no configuration for ${entry.importName}`);
    return extractWith(entry, config, compilerState, root);
  });
}

function extractWith(
  entry: EntryPoint,
  config: ExtractorConfig,
  compilerState: CompilerState,
  root: string,
): EntryPointReport {
  const projectFolder = join(root, entry.packageDir);
  const apiJsonPath = config.apiJsonFilePath;
  const messages: ExtractorMessage[] = [];
  Extractor.invoke(config, {
    compilerState,
    localBuild: true,
    messageCallback: (message) => {
      messages.push(message);
      message.handled = true; // nothing printed: the caller reports
    },
  });

  const model = JSON.parse(readFileSync(apiJsonPath, "utf8")) as ApiJsonPackage;
  // API Documenter names pages after the package; a subpath gets its own name so its pages do not collide
  // with the package's main entry point.
  model.name = documentedPackageName(entry);
  writeFileSync(apiJsonPath, `${JSON.stringify(model, null, 2)}\n`);

  const exportsByFile = new Set(
    (model.members ?? [])
      .flatMap((entryPoint) => entryPoint.members ?? [])
      .map((item) => `${item.name}@${item.fileUrlPath ?? ""}`),
  );
  const undocumentedExports: UndocumentedExport[] = [];
  let undocumentedMembers = 0;
  const errors: string[] = [];
  for (const message of messages) {
    const location = describeLocation(message, root);
    if (message.logLevel === ExtractorLogLevel.Error) errors.push(`${location}: ${message.text}`);
    if (message.messageId !== "ae-undocumented") continue;
    const name = /^Missing documentation for "(.+)"\.$/.exec(message.text)?.[1];
    const file = message.sourceFilePath === undefined ? "" : relative(projectFolder, message.sourceFilePath);
    if (name !== undefined && exportsByFile.has(`${name}@${file}`)) {
      if (!undocumentedExports.some((known) => known.name === name))
        undocumentedExports.push({ name, location });
    } else {
      undocumentedMembers += 1;
    }
  }
  undocumentedExports.sort((a, b) => a.name.localeCompare(b.name));
  return { entry, apiJsonPath, undocumentedExports, undocumentedMembers, errors };
}

function describeLocation(message: ExtractorMessage, root: string): string {
  if (message.sourceFilePath === undefined) return "(no file)";
  return `${relative(root, message.sourceFilePath)}:${message.sourceFileLine ?? 0}`;
}

/**
 * The package name the entry point's doc model carries: the package's own for its main entry point, and for a
 * subpath the package's name with `_` and the subpath (`@agent-kernel/kernel_admin`), since API Documenter takes
 * only valid package names and names each page after one.
 */
export function documentedPackageName(entry: EntryPoint): string {
  return entry.subpath === "."
    ? entry.packageName
    : `${entry.packageName}_${entry.subpath.slice(2).replaceAll("/", "_")}`;
}
