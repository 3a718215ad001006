// `agent` flags a new user trips over, as subprocesses against tooling/fake-llm: `--session-id` never replaces
// a conversation's id, `-m -` reads the message from stdin, `--version`, examples in `--help`, and the
// thinking levels the error lists are the ones accepted.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { THINKING_LEVELS } from "@agent-kernel/config";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { APP_DIR, type CliHarness, type CliResult, cleanEnv, createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

/** Several real agent processes per case, run at once on a loaded 2-core machine: minutes, not seconds. */
const CASE_TIMEOUT_MS = 300_000;

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const h = await createCliHarness();
  onTestFinished(() => h.close());
  return h;
}

/** `agent <args>` with `input` written to its stdin (the harness's runner gives it none). */
function runWithStdin(h: CliHarness, args: readonly string[], input: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--conditions=@agent-kernel/source",
        join(APP_DIR, "src", "main.ts"),
        ...args,
        "--config",
        h.configPath,
        "--state-dir",
        h.stateDir,
      ],
      { cwd: APP_DIR, env: cleanEnv(), stdio: ["pipe", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe.concurrent("agent flags", () => {
  it(
    "a --session-id the store does not know never replaces the main conversation's id",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      h.llm.enqueue(reply("first answer"), reply("still the same conversation"));
      expect((await h.run(["-m", "remember 42"])).code).toBe(EXIT.ok);
      const before = JSON.parse((await h.run(["sessions", "list", "--json"])).stdout) as {
        sessionKey: string;
        sessionId: string;
      }[];
      const mainId = before[0]?.sessionId ?? "?";

      const typo = await h.run(["-m", "what number?", "--session-id", `${mainId}x`]);
      expect(typo.code).toBe(EXIT.usage);
      expect(typo.stderr).toContain(`agent: no session "${mainId}x" for agent main`);
      expect(typo.stderr).toContain(
        `session agent:main:main already holds a conversation (session id ${mainId})`,
      );
      expect(typo.stderr).toContain("--session-key <new-key>");
      expect(h.llm.requests).toHaveLength(1);
      // The conversation is untouched: the same id, its messages, and the next turn continues it.
      expect((await h.run(["sessions", "show", mainId])).code).toBe(EXIT.ok);
      const next = await h.run(["-m", "what number?", "--session-id", mainId]);
      expect(next.stdout).toBe("still the same conversation\n");
      expect(JSON.stringify(h.llm.requests[1]?.body)).toContain("remember 42");

      // A new conversation is started explicitly, under a new key, with the id asked for.
      h.llm.enqueue(reply("fresh"));
      const fresh = await h.run(["-m", "new", "--session-key", "scratch", "--session-id", "my-id-1"]);
      expect(fresh.code).toBe(EXIT.ok);
      const after = JSON.parse((await h.run(["sessions", "list", "--json"])).stdout) as {
        sessionKey: string;
        sessionId: string;
      }[];
      expect(after.map((s) => [s.sessionKey, s.sessionId]).sort()).toEqual(
        [
          ["agent:main:main", mainId],
          ["agent:main:scratch", "my-id-1"],
        ].sort(),
      );
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "-m - sends what stdin holds",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      h.llm.enqueue(reply("read it"));
      const result = await runWithStdin(h, ["-m", "-"], "the message from a pipe\n");
      expect(result.stderr).toBe("");
      expect(result.stdout).toBe("read it\n");
      const sent = JSON.stringify(h.llm.requests[0]?.body);
      expect(sent).toContain("the message from a pipe");
      expect(sent).not.toContain('"content":"-"');

      const empty = await runWithStdin(h, ["-m", "-"], "  \n");
      expect(empty.code).toBe(EXIT.usage);
      expect(empty.stderr).toBe("agent: --message - read no text from stdin: pipe the message in.\n");
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "--version prints the package's version; --help has examples",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      const { version } = JSON.parse(readFileSync(join(APP_DIR, "package.json"), "utf8")) as {
        version: string;
      };
      const shown = await h.run(["--version"], { bare: true });
      expect(shown).toEqual({ code: EXIT.ok, stdout: `${version}\n`, stderr: "" });
      const help = await h.run(["--help"], { bare: true });
      expect(help.code).toBe(EXIT.ok);
      expect(help.stdout).toMatch(/\nExamples:\n {2}agent -m "[^"]+" +\S/);
      expect(help.stdout).toContain("agent -m -");
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "the thinking levels the error lists are exactly the ones accepted",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      const refused = await h.run(["-m", "x", "--thinking-once", "bogus"]);
      expect(refused.code).toBe(EXIT.usage);
      const listed = /not a thinking level \(([^)]+)\)/.exec(refused.stderr)?.[1]?.split(", ") ?? [];
      expect(listed).toEqual([...THINKING_LEVELS]);
      expect(listed).toContain("ultra");
      h.llm.enqueue(reply("ultra ok"));
      const ultra = await h.run(["-m", "x", "--thinking-once", "ultra"]);
      expect(ultra.stderr).toBe("");
      expect(ultra.code).toBe(EXIT.ok);
    },
    CASE_TIMEOUT_MS,
  );
});
