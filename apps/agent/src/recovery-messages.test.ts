// What `agent -m` says about recovery, as a subprocess against tooling/fake-llm: a missing API key is an auth
// error naming the provider and what to set (detected before any request), a 429 with `Retry-After` and
// nothing to fall back to is retried after the wait, a fallback switch and a compaction are one line each on
// stderr without --verbose, and `agent runs show` tells both.
import { writeFileSync } from "node:fs";
import { fault, reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

/** Several real agent processes per case, run at once on a loaded 2-core machine: minutes, not seconds. */
const CASE_TIMEOUT_MS = 300_000;

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void, extraConfig = "") {
  const h = await createCliHarness(extraConfig);
  onTestFinished(() => h.close());
  return h;
}

/** The harness's config with an Anthropic primary (no key in the test's environment) and `fallbacks`. */
function anthropicFirst(
  h: { configPath: string; workspaceDir: string; llm: { baseUrlFor(wire: "openai"): string } },
  fallbacks: string[],
) {
  writeFileSync(
    h.configPath,
    `{
  models: { providers: { scripted: { baseUrl: ${JSON.stringify(h.llm.baseUrlFor("openai"))}, api: "openai-completions",
    models: [{ id: "m1", contextWindow: 32000, maxTokens: 4096 }] } } },
  agents: {
    defaults: { model: { primary: "anthropic/claude-haiku-4-5", fallbacks: ${JSON.stringify(fallbacks)} }, workspace: ${JSON.stringify(h.workspaceDir)} },
    list: [{ id: "main", default: true }],
  },
}
`,
  );
}

describe.concurrent("agent -m: a missing API key", () => {
  it(
    "is an auth error naming the provider and the variable, before any request, in a new and an existing session",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      anthropicFirst(h, []);
      for (const turn of ["first", "second"]) {
        const result = await h.run(["-m", turn]);
        expect(result.code).toBe(EXIT.failed);
        expect(result.stderr).toMatch(
          /^agent: run \S+ ended error \(auth: no API key found for provider "anthropic": set ANTHROPIC_API_KEY \(or [A-Z_, ]+\) in the environment, or add an auth profile for "anthropic" \(auth\.profiles in the config, or auth-profiles\.json in the agent dir\)\)\.\n$/,
        );
        expect(result.stderr).not.toMatch(/\/login|continue from/);
      }
      const runs = JSON.parse((await h.run(["runs", "list", "--json"])).stdout) as { runId: string }[];
      const shown = await h.run(["runs", "show", runs[0]?.runId ?? "?"]);
      expect(shown.stdout).toContain("#1 anthropic/claude-haiku-4-5 thinking=");
      expect(shown.stdout).toMatch(
        /→ error \(auth, then surface\): no API key found for provider "anthropic"/,
      );
      expect(shown.stdout).toContain("last model:  anthropic/claude-haiku-4-5");
      expect(shown.stdout).toContain(
        "Fallback: none (anthropic/claude-haiku-4-5 failed and no other model was tried)",
      );
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "falls back to the next model, which gets the user message once, and says so on stderr",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      anthropicFirst(h, ["scripted/m1"]);
      h.llm.enqueue(reply("answered by the fallback"));
      const result = await h.run(["-m", "the one message"]);
      expect(result.stdout).toBe("answered by the fallback\n");
      expect(result.code).toBe(EXIT.ok);
      expect(result.stderr).toBe(
        'agent: anthropic/claude-haiku-4-5 failed (auth: no API key found for provider "anthropic": set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_OAUTH_TOKEN) in the environment, or add an auth profile for "anthropic" (auth.profiles in the config, or auth-profiles.json in the agent dir)); falling back to scripted/m1.\n',
      );
      expect(h.llm.requests).toHaveLength(1);
      const sent = JSON.stringify(h.llm.requests[0]?.body);
      expect(sent.split("the one message")).toHaveLength(2);

      const runId = (JSON.parse((await h.run(["runs", "list", "--json"])).stdout) as { runId: string }[])[0]
        ?.runId;
      const shown = await h.run(["runs", "show", runId ?? "?"]);
      expect(shown.stdout).toContain("Fallback: anthropic/claude-haiku-4-5 (auth) → scripted/m1 (answered)");
    },
    CASE_TIMEOUT_MS,
  );
});

describe.concurrent("agent -m: recovery messages", () => {
  it(
    "a 429 with Retry-After and no fallback is retried after the wait, and the run says so",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      h.llm.enqueue(fault("rate_limit", { retryAfterSeconds: 1 }), reply("after the wait"));
      const result = await h.run(["-m", "hi"]);
      expect(result.stdout).toBe("after the wait\n");
      expect(result.code).toBe(EXIT.ok);
      expect(h.llm.requests).toHaveLength(2);
      const gap = (h.llm.requests[1]?.receivedAt ?? 0) - (h.llm.requests[0]?.receivedAt ?? 0);
      expect(gap).toBeGreaterThanOrEqual(950);
      expect(result.stderr).toMatch(
        /^agent: scripted\/m1 is rate limited \(rate_limit\); retrying in 1 s as the provider asked \(Retry-After\)\.\n$/,
      );
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "a failed compaction is one line on stderr, and runs show lists it",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      h.llm.enqueue(fault("context_overflow"));
      const result = await h.run(["-m", "hi"]);
      expect(result.code).toBe(EXIT.failed);
      const lines = result.stderr.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^agent: compacting the session failed: .+\.$/);
      expect(lines[1]).toMatch(/^agent: run (\S+) ended error \(context_overflow: /);
      expect(lines).toHaveLength(2);
      const runId = /^agent: run (\S+) ended/.exec(lines[1] ?? "")?.[1] ?? "?";
      const shown = await h.run(["runs", "show", runId]);
      expect(shown.stdout).toMatch(/\nCompactions \(1\):\n {2}during attempt #1: failed: .+\n/);
      expect(shown.stdout).toContain("Fallback: none (scripted/m1 failed and no other model was tried)");
      expect(shown.stdout).not.toContain("the first candidate answered");
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "a compaction that worked is one line on stderr, and runs show lists it",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      const long = (n: number) => `${"lorem ipsum dolor sit amet ".repeat(600)}${n}`;
      h.llm.enqueue(reply(long(1)), reply(long(2)), reply(long(3)));
      for (const turn of ["one", "two", "three"]) expect((await h.run(["-m", turn])).code).toBe(EXIT.ok);
      // pi's compaction summarises the history and the cut turn's prefix: two model calls.
      h.llm.enqueue(
        fault("context_overflow"),
        reply("the summary"),
        reply("the prefix summary"),
        reply("answered after compaction"),
      );
      const result = await h.run(["-m", "four"]);
      expect(result.stdout).toBe("answered after compaction\n");
      expect(result.code).toBe(EXIT.ok);
      expect(result.stderr).toMatch(
        /^agent: the context was too large for scripted\/m1: the session was compacted \(\d+ tokens before\); trying again\.\n$/,
      );
      const runId = (JSON.parse((await h.run(["runs", "list", "--json"])).stdout) as { runId: string }[])[0]
        ?.runId;
      const shown = await h.run(["runs", "show", runId ?? "?"]);
      expect(shown.stdout).toMatch(
        /\nCompactions \(1\):\n {2}during attempt #1: compacted \(overflow\), \d+ tokens before\n/,
      );
    },
    CASE_TIMEOUT_MS,
  );
});
