// The shipped binary: builds the app and its dependencies with turbo (cached after the first build; the demo
// builds the same graph), then runs `node dist/main.js` with no source condition, exactly as installed. It is a
// bundle (tooling/scripts/bundle-bin.mjs): the kernel's modules and their pure-JS dependencies are inside it,
// and what stays external (pi, better-sqlite3, kysely) is found where the kernel's packages find it.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { reply } from "@agent-kernel/fake-llm";
import { turnOutcomeJsonSchema } from "@agent-kernel/kernel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../src/exit-codes.ts";
import { APP_DIR, type CliHarness, cleanEnv, createCliHarness, REPO_ROOT, runNode } from "./cli-harness.ts";

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

describe("the repo's `tooling/pnpm agent` script", () => {
  it("runs the installed bin (its start-up guard included): a reader that closes the pipe early ends the output quietly", async ({
    onTestFinished,
  }) => {
    const rootManifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    const appManifest = JSON.parse(readFileSync(join(APP_DIR, "package.json"), "utf8")) as {
      bin: Record<string, string>;
    };
    // What the script runs after its build step: the same file npm installs as the `agent` command.
    const command = /&& node (\S+)$/.exec(rootManifest.scripts.agent ?? "")?.[1];
    expect(command).toBe(join("apps", "agent", appManifest.bin.agent ?? "").replace(/\\/g, "/"));
    // A long streamed reply into `head -c 5`: the pipe closes while the agent still writes (main.js alone,
    // without the guard, died of an unhandled EPIPE with a stack).
    // A harness of its own: the cut-off turn leaves its run to be recovered by the next process, which the
    // other tests here (counting the modules a turn loads) must not meet.
    const own = await createCliHarness();
    onTestFinished(() => own.close());
    own.llm.enqueue(
      reply(Array.from({ length: 3000 }, (_, index) => `line ${index} of a long answer`).join("\n")),
    );
    const script = `node ${JSON.stringify(join(REPO_ROOT, command ?? ""))} -m hi --stream --config ${JSON.stringify(
      own.configPath,
    )} --state-dir ${JSON.stringify(own.stateDir)} | head -c 5; status=\${PIPESTATUS[0]}; echo; echo "agent exit $status" >&2`;
    const result = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn("bash", ["-c", script], { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      child.once("error", reject);
      child.once("close", () => resolve({ stdout, stderr }));
    });
    expect(result.stdout).toBe("line \n");
    expect(result.stderr).toBe("agent exit 0\n");
  }, 120_000);
});

/** Runs the built binary with a `--import` hook that writes the URL of every module it loads to a file. */
async function runCountingLoads(args: readonly string[]): Promise<{ code: number | null; loaded: string[] }> {
  const listPath = join(h.root, `loaded-${Math.random().toString(36).slice(2)}.json`);
  const hookPath = join(h.root, "count-loads.mjs");
  writeFileSync(
    hookPath,
    `import { registerHooks } from "node:module";
import { writeFileSync } from "node:fs";
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on("exit", () => writeFileSync(${JSON.stringify(listPath)}, JSON.stringify(loaded)));
`,
  );
  const common = ["--config", h.configPath, "--state-dir", h.stateDir];
  const result = await runNode(
    ["--import", pathToFileURL(hookPath).href, join(APP_DIR, "dist", "main.js"), ...args, ...common],
    cleanEnv(),
  );
  expect(result.stderr).toBe("");
  return { code: result.code, loaded: JSON.parse(readFileSync(listPath, "utf8")) as string[] };
}

describe("the bundled dist/main.js", () => {
  it("loads the kernel's code from the bundle, pi and better-sqlite3 from where the kernel resolves them", async () => {
    h.llm.enqueue(reply("bundled"));
    const { code, loaded } = await runCountingLoads(["-m", "hi"]);
    expect(code).toBe(EXIT.ok);
    const workspaceSources = loaded.filter((url) => /\/(packages|apps)\/[^/]+\/(src|dist)\//.test(url));
    expect(workspaceSources.every((url) => url.includes("/apps/agent/dist/main"))).toBe(true);
    expect(workspaceSources.length).toBeGreaterThan(1); // the entry and its chunks
    for (const inlined of ["/zod/", "/commander/", "/json5/", "/@opentelemetry/api/"]) {
      expect(loaded.filter((url) => url.includes(inlined))).toEqual([]);
    }
    expect(loaded.some((url) => url.includes("/@earendil-works/pi-coding-agent/"))).toBe(true);
    expect(loaded.some((url) => url.includes("/better-sqlite3/"))).toBe(true);
    // a few hundred modules fewer than the unbundled build's ≈2,070 (pi's own ≈1,690 remain)
    expect(loaded.length).toBeLessThan(1_900);
  });

  it("requires kysely (loaded at runtime by the session store) when a command needs it: runs show", async () => {
    h.llm.enqueue(reply("for runs show"));
    const turn = await h.run(["-m", "hi", "--json"], { entry: "dist" });
    expect(turn.code).toBe(EXIT.ok);
    const { runId } = JSON.parse(turn.stdout) as { runId: string };
    const { code, loaded } = await runCountingLoads(["runs", "show", runId]);
    expect(code).toBe(EXIT.ok);
    expect(loaded.some((url) => url.includes("/kysely/"))).toBe(true);
  });

  it("sessions list loads no pi module", async () => {
    const { code, loaded } = await runCountingLoads(["sessions", "list"]);
    expect(code).toBe(EXIT.ok);
    expect(loaded.filter((url) => url.includes("@earendil-works"))).toEqual([]);
  });
});
