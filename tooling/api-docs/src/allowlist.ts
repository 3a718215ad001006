// The exports that had no doc comment when the API reference was introduced. Owns: reading and writing
// undocumented-exports.json ({ "<import name>": ["<export>", ...] }) and comparing it with what API Extractor
// found. The list only shrinks: `generate` drops names that got a doc comment (or went away) and never adds one,
// so a new export without a doc comment fails the test until it has one.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EntryPointReport, UndocumentedExport } from "./extract.ts";

export const ALLOWLIST_PATH = join(import.meta.dirname, "..", "undocumented-exports.json");

/** Import name (`@agent-kernel/kernel/admin`) → exports allowed to lack a doc comment. */
export type Allowlist = Readonly<Record<string, readonly string[]>>;

export function readAllowlist(path: string = ALLOWLIST_PATH): Allowlist {
  if (!existsSync(path)) return {};
  return JSON.parse(readFileSync(path, "utf8")) as Allowlist;
}

export function writeAllowlist(allowlist: Allowlist, path: string = ALLOWLIST_PATH): void {
  const sorted = Object.fromEntries(
    Object.entries(allowlist)
      .filter(([, names]) => names.length > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([importName, names]) => [importName, [...names].sort()]),
  );
  writeFileSync(path, `${JSON.stringify(sorted, null, 2)}\n`);
}

/** The undocumented exports of `report` that the allowlist does not excuse. */
export function newlyUndocumented(report: EntryPointReport, allowlist: Allowlist): UndocumentedExport[] {
  const allowed = new Set(allowlist[report.entry.importName] ?? []);
  return report.undocumentedExports.filter((item) => !allowed.has(item.name));
}

/** The allowlist without names that are documented now or no longer exported. */
export function prunedAllowlist(reports: readonly EntryPointReport[], allowlist: Allowlist): Allowlist {
  const undocumented = new Map(
    reports.map((report) => [
      report.entry.importName,
      new Set(report.undocumentedExports.map((item) => item.name)),
    ]),
  );
  return Object.fromEntries(
    Object.entries(allowlist).map(([importName, names]) => [
      importName,
      names.filter((name) => undocumented.get(importName)?.has(name) === true),
    ]),
  );
}

/** How many exports the allowlist excuses. */
export function allowlistSize(allowlist: Allowlist): number {
  return Object.values(allowlist).reduce((sum, names) => sum + names.length, 0);
}
