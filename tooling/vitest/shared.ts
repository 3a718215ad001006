// Shared vitest settings for every workspace project. Owns: source-condition
// resolution (tests run against each package's src, no build needed) and the
// JSON report that `tooling/scripts/run-tests.mjs` adds up into the CI line.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type ViteUserConfig } from "vitest/config";

export const SOURCE_CONDITION = "@agent-kernel/source";
const FAST_CHECK_SEED = fileURLToPath(new URL("./fast-check-seed.ts", import.meta.url));

/** The per-package vitest project: `export default packageProject(import.meta.dirname)`. */
export function packageProject(dir: string, overrides: ViteUserConfig["test"] = {}): ViteUserConfig {
  return defineConfig({
    root: dir,
    resolve: { conditions: [SOURCE_CONDITION] },
    ssr: { resolve: { conditions: [SOURCE_CONDITION] } },
    test: {
      include: ["src/**/*.test.ts", "test/**/*.test.ts"],
      environment: "node",
      reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
      // Several packages' suites run at once on a 2-core CI machine and some tests start child processes
      // (a CLI, a second store process, pi turns): generous limits keep a loaded machine from failing a
      // correct test. Speed is measured by benchmarks, never by these timeouts.
      testTimeout: 60_000,
      hookTimeout: 60_000,
      // one fast-check seed for every property test of a package that has them (FC_SEED to change it,
      // FC_SEED=random to explore): a CI run is reproducible, a failure names its seed
      ...(existsSync(join(dir, "node_modules", "fast-check")) ? { setupFiles: [FAST_CHECK_SEED] } : {}),
      ...overrides,
    },
  });
}
