// Checks a workspace against the layer table. Owns: finding the workspace
// packages (packages/*, apps/*, tooling/*), judging each package.json
// dependency and each import of each source file, and wording the violations.
// Does not own: the table itself (layers.ts) or reading imports out of source
// text (import-scanner.ts).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { findImports } from "./import-scanner.ts";
import {
  appLayerEntryFor,
  type LayerEntry,
  layerEntryFor,
  mayDependOn,
  restrictionFor,
  shortName,
  TOOLING_ALLOWED_IN_TESTS,
  WORKSPACE_SCOPE,
} from "./layers.ts";

export type ViolationRule =
  | "upward-or-sideways"
  | "undeclared"
  | "forbidden-third-party"
  | "escapes-package"
  | "tooling-import"
  | "unknown-package";

export type Violation = {
  readonly packageName: string;
  /** Repo-relative, with `/` separators: a source file or the package.json. */
  readonly file: string;
  readonly line?: number;
  readonly specifier: string;
  readonly rule: ViolationRule;
  /** One line: where, what is wrong, and what is allowed. */
  readonly message: string;
};

export const PACKAGE_GROUPS = ["packages", "apps", "tooling"] as const;
export type PackageGroup = (typeof PACKAGE_GROUPS)[number];

const DEPENDENCY_FIELDS = [
  "dependencies",
  "peerDependencies",
  "optionalDependencies",
  "devDependencies",
] as const;
type DependencyField = (typeof DEPENDENCY_FIELDS)[number];
const RUNTIME_FIELDS = ["dependencies", "peerDependencies", "optionalDependencies"] as const;
const RUNTIME_FIELDS_TEXT = "dependencies, peerDependencies or optionalDependencies";
const ALL_FIELDS_TEXT = "dependencies, peerDependencies, optionalDependencies or devDependencies";

export type WorkspacePackage = {
  readonly name: string;
  readonly group: PackageGroup;
  /** Absolute directory. */
  readonly dir: string;
  /** Repo-relative directory with `/` separators, e.g. `packages/config`. */
  readonly relativeDir: string;
  readonly dependencies: Readonly<Record<DependencyField, readonly string[]>>;
  /** The raw package.json text, to point violations at a line. */
  readonly manifestText: string;
};

export type LayerCheckResult = {
  readonly packages: readonly WorkspacePackage[];
  readonly violations: readonly Violation[];
};

const SOURCE_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"]);
const SOURCE_DIRS = ["src", "test"];
const SKIPPED_DIRS = new Set(["node_modules", "dist"]);
const TEST_FILE = /\.test\.[cm]?[jt]s$/;
const LAYER_TABLE_FILE = "tooling/layer-check/src/layers.ts";

/** What the layer table says about a package, decided by where it lives and its name. */
type PackageRole =
  | { readonly kind: "layered"; readonly entry: LayerEntry; readonly label: string }
  | { readonly kind: "tooling" }
  | { readonly kind: "unknown" };

type Judgement = { readonly rule: ViolationRule; readonly reason: string };

type CheckContext = {
  readonly rootDir: string;
  readonly pkg: WorkspacePackage;
  readonly role: PackageRole;
  readonly workspace: ReadonlyMap<string, WorkspacePackage>;
  readonly violations: Violation[];
};

export function checkWorkspace(rootDir: string): Violation[] {
  return [...runLayerCheck(rootDir).violations];
}

export function runLayerCheck(rootDir: string): LayerCheckResult {
  const root = resolve(rootDir);
  // A mistyped root would otherwise pass as an empty, clean workspace.
  if (!existsSync(root)) throw new Error(`${root} does not exist`);
  const packages = discoverWorkspacePackages(root);
  const workspace = new Map(packages.map((pkg) => [pkg.name, pkg]));
  const violations: Violation[] = [];
  for (const pkg of packages) {
    const context: CheckContext = { rootDir: root, pkg, role: roleOf(pkg), workspace, violations };
    checkPackageIsKnown(context);
    checkManifest(context);
    for (const file of listSourceFiles(pkg.dir)) checkSourceFile(context, file);
  }
  return { packages, violations };
}

/** The directories packages/*, apps/* and tooling/* that hold a package.json, in a stable order. */
export function discoverWorkspacePackages(rootDir: string): WorkspacePackage[] {
  const root = resolve(rootDir);
  return PACKAGE_GROUPS.flatMap((group) => {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) return [];
    return readdirSync(groupDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(groupDir, entry.name, "package.json")))
      .map((entry) => entry.name)
      .sort()
      .map((name) => readWorkspacePackage(root, group, join(groupDir, name)));
  });
}

function readWorkspacePackage(rootDir: string, group: PackageGroup, dir: string): WorkspacePackage {
  const relativeDir = toRepoPath(rootDir, dir);
  const manifestText = readFileSync(join(dir, "package.json"), "utf8");
  let manifest: unknown;
  try {
    manifest = JSON.parse(manifestText);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${relativeDir}/package.json is not valid JSON: ${reason}`);
  }
  const fields = isRecord(manifest) ? manifest : {};
  const namesIn = (field: DependencyField): string[] => {
    const value = fields[field];
    return isRecord(value) ? Object.keys(value) : [];
  };
  const dependencies = {
    dependencies: namesIn("dependencies"),
    peerDependencies: namesIn("peerDependencies"),
    optionalDependencies: namesIn("optionalDependencies"),
    devDependencies: namesIn("devDependencies"),
  };
  // A package without a name cannot be depended on; its directory still identifies it in messages.
  const name = typeof fields.name === "string" ? fields.name : relativeDir;
  return { name, group, dir, relativeDir, dependencies, manifestText };
}

function roleOf(pkg: WorkspacePackage): PackageRole {
  if (pkg.group === "tooling") return { kind: "tooling" };
  const entry = pkg.group === "apps" ? appLayerEntryFor(pkg.name) : layerEntryFor(pkg.name);
  if (entry === undefined) return { kind: "unknown" };
  return { kind: "layered", entry, label: `${shortName(pkg.name)} (layer ${entry.layer})` };
}

function checkPackageIsKnown({ pkg, role, violations }: CheckContext): void {
  if (role.kind !== "unknown") return;
  violations.push({
    packageName: pkg.name,
    file: `${pkg.relativeDir}/package.json`,
    specifier: pkg.name,
    rule: "unknown-package",
    message:
      `${pkg.relativeDir}/package.json: "${pkg.name}" is not in the layer table, so its layer and allowed ` +
      `dependencies are unknown; add it to the layer table in ${LAYER_TABLE_FILE}`,
  });
}

function checkManifest(context: CheckContext): void {
  const { pkg, violations } = context;
  const file = `${pkg.relativeDir}/package.json`;
  for (const field of DEPENDENCY_FIELDS) {
    for (const dependency of pkg.dependencies[field]) {
      if (dependency === pkg.name) continue;
      const judgement = judgeDependency(context, dependency, field === "devDependencies");
      if (judgement === undefined) continue;
      const line = lineOfDependency(pkg.manifestText, field, dependency);
      violations.push({
        packageName: pkg.name,
        file,
        ...(line === undefined ? {} : { line }),
        specifier: dependency,
        rule: judgement.rule,
        message: `${formatLocation(file, line)} declares "${dependency}" in ${field}: ${judgement.reason}`,
      });
    }
  }
}

function checkSourceFile(context: CheckContext, absoluteFile: string): void {
  const { rootDir, pkg, violations } = context;
  const file = toRepoPath(rootDir, absoluteFile);
  const isTestFile = isTest(pkg, absoluteFile);
  for (const site of findImports(readFileSync(absoluteFile, "utf8"))) {
    const judgement = judgeSpecifier(context, absoluteFile, site.specifier, isTestFile);
    if (judgement === undefined) continue;
    violations.push({
      packageName: pkg.name,
      file,
      line: site.line,
      specifier: site.specifier,
      rule: judgement.rule,
      message: `${formatLocation(file, site.line)} imports "${site.specifier}"${judgement.reason}`,
    });
  }
}

/** Why an import is not allowed (the text that follows the quoted specifier), or undefined when it is. */
function judgeSpecifier(
  context: CheckContext,
  fromFile: string,
  specifier: string,
  isTestFile: boolean,
): Judgement | undefined {
  const { pkg } = context;
  if (specifier === "" || specifier.startsWith("#") || isBuiltin(specifier)) return undefined;
  if (specifier.startsWith("file:")) return judgePath(context, fileURLToPath(specifier));
  if (specifier.startsWith(".") || isAbsolute(specifier)) {
    return judgePath(context, resolve(dirname(fromFile), specifier));
  }
  // Other URL schemes (data:, https:) name no package.
  if (/^[a-z][a-z0-9+.-]*:/i.test(specifier) && !specifier.startsWith("node:")) return undefined;

  const target = packageNameOf(specifier);
  if (target === pkg.name) return undefined;
  const judgement = judgeDependency(context, target, isTestFile);
  if (judgement !== undefined) return { rule: judgement.rule, reason: `: ${judgement.reason}` };

  const declaredAtRuntime = RUNTIME_FIELDS.some((field) => pkg.dependencies[field].includes(target));
  if (declaredAtRuntime) return undefined;
  const declaredForDevelopment = pkg.dependencies.devDependencies.includes(target);
  if (isTestFile && declaredForDevelopment) return undefined;

  const named = target === specifier ? "" : ` (package "${target}")`;
  const manifest = `${pkg.relativeDir}/package.json`;
  const problem = declaredForDevelopment
    ? `${named}, which ${manifest} declares only in devDependencies`
    : `${named}, which ${manifest} does not declare`;
  const allowed = isTestFile
    ? `test files may use ${ALL_FIELDS_TEXT}`
    : `non-test files may use only ${RUNTIME_FIELDS_TEXT}`;
  return { rule: "undeclared", reason: `${problem}: ${allowed}` };
}

/** Relative and absolute imports: packages and apps stay inside their own directory. */
function judgePath(context: CheckContext, target: string): Judgement | undefined {
  const { rootDir, pkg } = context;
  if (pkg.group === "tooling" || isInside(pkg.dir, target)) return undefined;
  if (isInside(join(rootDir, "tooling"), target)) {
    return {
      rule: "tooling-import",
      reason: `, which reaches into tooling/: packages and apps never import tooling code (tooling/*)`,
    };
  }
  return {
    rule: "escapes-package",
    reason:
      `, which resolves outside ${pkg.relativeDir}: import another package by its name ` +
      `(declared in package.json and allowed by the layer table), never by a path into it`,
  };
}

/**
 * Whether the package may depend on `target` at all, by the layer table and the
 * third-party restrictions. `forTests` is true for devDependencies and test files.
 */
function judgeDependency(context: CheckContext, target: string, forTests: boolean): Judgement | undefined {
  const { pkg, role, workspace } = context;
  const targetPackage = workspace.get(target);

  if (targetPackage?.group === "tooling") {
    if (role.kind === "tooling" || (forTests && TOOLING_ALLOWED_IN_TESTS)) return undefined;
    return {
      rule: "tooling-import",
      reason: TOOLING_ALLOWED_IN_TESTS
        ? "tooling packages (tooling/*) may be used by packages and apps only from test files, as a devDependency"
        : "packages and apps never depend on tooling packages (tooling/*)",
    };
  }

  if (target.startsWith(WORKSPACE_SCOPE) || targetPackage !== undefined) {
    if (role.kind !== "layered" || mayDependOn(role.entry, target)) return undefined;
    const allowed = role.entry.mayDependOn.map(shortName).join(", ") || "(none)";
    return { rule: "upward-or-sideways", reason: `${role.label} may depend only on: ${allowed}` };
  }

  const restriction = restrictionFor(target);
  if (restriction === undefined) return undefined;
  if (restriction.allowedFor.includes(pkg.name)) return undefined;
  if (role.kind === "tooling" && restriction.allowedInTooling) return undefined;
  if (forTests && restriction.allowedInTests) return undefined;
  const users = [
    ...restriction.allowedFor.map(shortName),
    ...(restriction.allowedInTooling ? ["tooling/*"] : []),
  ];
  return {
    rule: "forbidden-third-party",
    reason: `${restriction.label} (${restriction.pattern}) may be used only by ${joinWithAnd(users)}`,
  };
}

function listSourceFiles(packageDir: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    // Code-unit order, like discoverWorkspacePackages: the report must not depend on the locale.
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(path);
      } else if (entry.isFile() && SOURCE_EXTENSIONS.has(extname(entry.name))) {
        files.push(path);
      }
    }
  };
  for (const sourceDir of SOURCE_DIRS) {
    const dir = join(packageDir, sourceDir);
    if (existsSync(dir)) walk(dir);
  }
  return files;
}

/** `*.test.ts` anywhere, or anything under test/; src/testing/ helpers are shipped code. */
function isTest(pkg: WorkspacePackage, file: string): boolean {
  const pathInPackage = relative(pkg.dir, file).split(sep);
  return pathInPackage[0] === "test" || TEST_FILE.test(basename(file));
}

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

function isInside(dir: string, target: string): boolean {
  const path = relative(dir, target);
  return path !== ".." && !path.startsWith(`..${sep}`) && !isAbsolute(path);
}

function toRepoPath(rootDir: string, path: string): string {
  return relative(rootDir, path).split(sep).join("/");
}

function formatLocation(file: string, line: number | undefined): string {
  return line === undefined ? file : `${file}:${line}`;
}

/** The line of `"name"` inside the given dependency field of package.json text. */
function lineOfDependency(manifestText: string, field: DependencyField, name: string): number | undefined {
  const fieldAt = manifestText.indexOf(`"${field}"`);
  const at = manifestText.indexOf(`"${name}"`, Math.max(fieldAt, 0));
  if (at === -1) return undefined;
  return manifestText.slice(0, at).split("\n").length;
}

function joinWithAnd(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
