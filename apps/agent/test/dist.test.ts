// The shipped binary: builds the app and its dependencies with turbo (cached after the first build; the demo
// builds the same graph), then runs `node dist/main.js` with no source condition, exactly as installed.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { turnOutcomeJsonSchema } from "@agent-kernel/kernel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../src/exit-codes.ts";
import { type CliHarness, cleanEnv, createCliHarness, REPO_ROOT } from "./cli-harness.ts";

let h: CliHarness;
beforeAll(async () => {
  const build = spawnSync(
    join(REPO_ROOT, "tooling", "pnpm"),
    ["exec", "turbo", "run", "build", "--filter=@agent-kernel/agent...", "--output-logs=errors-only"],
    { cwd: REPO_ROOT, encoding: "utf8", env: cleanEnv() },
  );
  if (build.status !== 0) throw new Error(`building the agent app failed:\n${build.stdout}\n${build.stderr}`);
  h = await createCliHarness();
}, 300_000);
afterAll(async () => {
  await h?.close();
});

describe("the built dist/main.js", () => {
  it("runs a turn with --json valid against the schema, and exits 2 on a bad flag", async () => {
    h.llm.enqueue(reply("from the built binary"));
    const result = await h.run(["-m", "hi", "--json"], { entry: "dist" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(EXIT.ok);
    const outcome = turnOutcomeJsonSchema.parse(JSON.parse(result.stdout));
    expect(outcome.result.assistantText).toBe("from the built binary");

    const bad = await h.run(["--bogus"], { entry: "dist" });
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/^agent: unknown option '--bogus'/);
  });
});
