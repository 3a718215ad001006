// `tooling/pnpm --filter @agent-kernel/api-docs run generate`: builds the published packages, regenerates
// docs/api from their doc comments and drops allowlisted exports that have a doc comment now. Owns only the
// command line; prints which exports still need a doc comment and exits 1 when a new one lacks it.
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import {
  ALLOWLIST_PATH,
  allowlistSize,
  newlyUndocumented,
  prunedAllowlist,
  readAllowlist,
  writeAllowlist,
} from "./allowlist.ts";
import { REPO_ROOT } from "./entry-points.ts";
import { buildPublishedPackages, DOCS_DIR, generateApiDocs, writeTree } from "./generate.ts";

buildPublishedPackages();
const { reports, files } = generateApiDocs(join(tmpdir(), `agent-kernel-api-docs-${process.pid}`));
writeTree(DOCS_DIR, files);
const allowlist = prunedAllowlist(reports, readAllowlist());
writeAllowlist(allowlist);
// the lint step formats JSON with biome: write it the way biome would
spawnSync(join(REPO_ROOT, "node_modules", ".bin", "biome"), ["format", "--write", ALLOWLIST_PATH], {
  stdio: "ignore",
});
console.log(`api-docs: wrote ${files.size} files to ${relative(REPO_ROOT, DOCS_DIR)}`);
console.log(
  `api-docs: ${allowlistSize(allowlist)} exports still allowed without a doc comment (${relative(REPO_ROOT, ALLOWLIST_PATH)})`,
);
const missing = reports.flatMap((report) =>
  newlyUndocumented(report, allowlist).map(
    (item) => `  ${item.location}: ${report.entry.importName} exports ${item.name}`,
  ),
);
if (missing.length > 0) {
  console.error(
    `api-docs: ${missing.length} exports need a doc comment (/** one line saying what it is */):\n${missing.join("\n")}`,
  );
  process.exitCode = 1;
}
