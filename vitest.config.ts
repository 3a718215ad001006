// For editors and `vitest` at the root: every workspace package is a project.
// The README's test command runs each package on its own through turbo instead
// (cacheable per package); see tooling/scripts/run-tests.mjs.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "tooling/*"],
  },
});
