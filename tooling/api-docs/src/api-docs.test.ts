// The API reference is complete and current: every published entry point is read by API Extractor from the built
// types, an export without a doc comment fails (unless it is in the allowlist of those that had none when the
// reference was introduced), docs/api is exactly what the generator makes from today's sources, and every
// published package's README links to its part of it.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALLOWLIST_PATH, newlyUndocumented, prunedAllowlist, readAllowlist } from "./allowlist.ts";
import { docsFolderName, publishedEntryPoints, REPO_ROOT } from "./entry-points.ts";
import { extractEntryPoints } from "./extract.ts";
import {
  type ApiDocs,
  buildPublishedPackages,
  DOCS_DIR,
  differingFiles,
  generateApiDocs,
  REGENERATE_COMMAND,
  readTree,
} from "./generate.ts";

const FIXTURE_REPO = join(import.meta.dirname, "..", "fixtures", "repo");
const ENTRY_POINTS = publishedEntryPoints();

let workDir: string;
let docs: ApiDocs;

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), "api-docs-test-"));
  buildPublishedPackages();
  docs = generateApiDocs(join(workDir, "generated"), ENTRY_POINTS);
}, 600_000);

afterAll(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe("the doc-comment gate, on a fixture package", () => {
  it("finds every typed subpath of a published package and skips private ones", () => {
    expect(publishedEntryPoints(FIXTURE_REPO).map((entry) => [entry.importName, entry.types])).toEqual([
      ["@fixture/sample", "types/index.d.ts"],
      ["@fixture/sample/extra", "types/extra.d.ts"],
    ]);
  });

  it("reports exports without a doc comment, and counts undocumented members apart", () => {
    const [report, extraReport] = extractEntryPoints(
      publishedEntryPoints(FIXTURE_REPO),
      join(workDir, "fixture"),
      FIXTURE_REPO,
    );
    if (report === undefined || extraReport === undefined) throw new Error("fixture entry points missing");
    expect(report.errors).toEqual([]);
    expect(report.undocumentedExports.map((item) => item.name)).toEqual(["LIMIT", "shout"]);
    expect(report.undocumentedExports[1]?.location).toBe("packages/sample/types/index.d.ts:3");
    expect(report.undocumentedMembers).toBe(1); // Options.pitch
    expect(newlyUndocumented(report, { "@fixture/sample": ["shout"] }).map((item) => item.name)).toEqual([
      "LIMIT",
    ]);
    expect(prunedAllowlist([report], { "@fixture/sample": ["shout", "greet", "gone"] })).toEqual({
      "@fixture/sample": ["shout"],
    });
    expect(extraReport.undocumentedExports.map((item) => item.name)).toEqual(["Extra"]);
  });
});

describe("every published entry point", () => {
  it("covers the subpaths of the packages' exports maps", () => {
    const names = ENTRY_POINTS.map((entry) => entry.importName);
    for (const expected of [
      "@agent-kernel/kernel",
      "@agent-kernel/kernel/admin",
      "@agent-kernel/kernel/testing",
      "@agent-kernel/session-store/postgres",
      "@agent-kernel/channels-core/testing",
      "@agent-kernel/agent",
    ]) {
      expect(names).toContain(expected);
    }
    expect(names.filter((name) => name.startsWith("@agent-kernel/registry-roundtrip"))).toEqual([]);
  });

  it.each(ENTRY_POINTS.map((entry) => entry.importName))(
    "%s: every export has a doc comment",
    (importName) => {
      const report = docs.reports.find((candidate) => candidate.entry.importName === importName);
      if (report === undefined) throw new Error(`${importName} was not extracted`);
      const missing = newlyUndocumented(report, readAllowlist()).map(
        (item) => `${item.location}: ${item.name} needs a doc comment (/** one line saying what it is */)`,
      );
      expect(missing, `${importName}: exports without a doc comment`).toEqual([]);
    },
  );

  it("the allowlist of undocumented exports names only exports that still lack one", () => {
    const allowlist = readAllowlist();
    expect(
      prunedAllowlist(docs.reports, allowlist),
      `${ALLOWLIST_PATH} names exports that have a doc comment now or are gone; run ${REGENERATE_COMMAND}`,
    ).toEqual(allowlist);
  });
});

describe("docs/api", () => {
  it("is what the generator makes from today's sources", () => {
    const stale = differingFiles(docs.files, readTree(DOCS_DIR));
    expect(
      stale.slice(0, 20),
      `docs/api is out of date in ${stale.length} files; run ${REGENERATE_COMMAND} and commit docs/api`,
    ).toEqual([]);
  });

  it("is linked from every published package's README", () => {
    const packages = new Map(ENTRY_POINTS.map((entry) => [entry.packageDir, entry.packageName]));
    const unlinked: string[] = [];
    for (const [packageDir, packageName] of packages) {
      const folder = docsFolderName(packageName);
      const link = `](../../docs/api/${folder}/${folder}.md)`;
      if (!readFileSync(join(REPO_ROOT, packageDir, "README.md"), "utf8").includes(link)) {
        unlinked.push(`${packageDir}/README.md lacks "API reference: [docs/api/${folder}${link}"`);
      }
    }
    expect(unlinked).toEqual([]);
    for (const [, packageName] of packages) {
      const folder = docsFolderName(packageName);
      expect(docs.files.has(`${folder}/${folder}.md`), `${folder}/${folder}.md generated`).toBe(true);
    }
  });
});
