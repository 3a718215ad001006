// `agent -m` as a subprocess against tooling/fake-llm over HTTP: every turn flag, the JSON outcome against its
// schema, streaming, persisted settings and a failed turn's exit code.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fault, reply, toolCall } from "@agent-kernel/fake-llm";
import { turnOutcomeJsonSchema } from "@agent-kernel/kernel";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

/** A harness closed when the test ends (tests run concurrently: each has its own server and dirs). */
async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void, extraConfig = "") {
  const h = await createCliHarness(extraConfig);
  onTestFinished(() => h.close());
  return h;
}

function outcomeOf(stdout: string) {
  const parsed = turnOutcomeJsonSchema.safeParse(JSON.parse(stdout));
  if (!parsed.success) throw new Error(`--json output does not match its schema: ${parsed.error.message}`);
  return parsed.data;
}

describe.concurrent("agent -m", () => {
  it("runs a tool-using turn, prints the final text, stores the run", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(toolCall("write", { path: "notes.md", content: "# Notes\n" }), reply("Wrote notes.md."));
    const result = await h.run(["-m", "write the notes"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(EXIT.ok);
    // Not a terminal and no --stream: only the final payload text.
    expect(result.stdout).toBe("Wrote notes.md.\n");
    expect(readFileSync(join(h.workspaceDir, "notes.md"), "utf8")).toBe("# Notes\n");
    expect(h.llm.requests.map((request) => request.served)).toEqual(["response", "response"]);

    const runs = await h.run(["runs", "list", "--json"]);
    const listed = JSON.parse(runs.stdout) as { status: string; entryPoint: string }[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ status: "succeeded", entryPoint: "agent" });
  });

  it("--json prints a TurnOutcome valid against its schema, with --session-key, --model, --thinking-once and --timeout applied", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply("hello from m2"));
    const result = await h.run([
      "-m",
      "hi",
      "--json",
      "--session-key",
      "work",
      "--model",
      "second",
      "--thinking-once",
      "off",
      "--timeout",
      "30",
    ]);
    expect(result.code).toBe(EXIT.ok);
    const outcome = outcomeOf(result.stdout);
    expect(outcome.status).toBe("ok");
    expect(outcome.result.assistantText).toBe("hello from m2");
    expect(outcome.decisions.runtime).toMatchObject({
      sessionKey: { value: "agent:main:work" },
      model: { value: { provider: "scripted", model: "m2" } },
      thinking: { value: "off" },
      timeoutMs: { value: 30_000 },
    });
    expect(h.llm.requests[0]?.model).toBe("m2");
    // --thinking-once is not persisted.
    expect(outcome.sessionMeta.thinkingLevel).toBeUndefined();
  });

  it("--thinking is persisted to the session and `off` clears it; --verbose prints decisions and events on stderr", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply("one"), reply("two"));
    const first = await h.run(["-m", "a", "--json", "--thinking", "high", "--verbose"]);
    expect(first.code).toBe(EXIT.ok);
    const firstOutcome = outcomeOf(first.stdout);
    expect(firstOutcome.sessionMeta).toMatchObject({ thinkingLevel: "high", verboseLevel: "on" });
    expect(firstOutcome.decisions.runtime).toMatchObject({ thinking: { value: "high" } });
    expect(first.stderr).toContain("[agent] attempt 1: scripted/m1 thinking=high");
    expect(first.stderr).toContain("[agent] run end: ok");

    const second = await h.run(["-m", "b", "--json", "--thinking", "off"]);
    const secondOutcome = outcomeOf(second.stdout);
    expect(secondOutcome.sessionMeta.thinkingLevel).toBeUndefined();
    expect(secondOutcome.decisions.runtime).not.toMatchObject({ thinking: { value: "high" } });
  });

  it("--stream writes partial text as it arrives, each model message on its own line", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(
      toolCall("write", { path: "a.txt", content: "a" }, { text: "Writing it." }),
      reply("All done now."),
    );
    const result = await h.run(["-m", "go", "--stream"]);
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toBe("Writing it.\nAll done now.\n");
  });

  it("--agent with --to picks the peer's session by session.dmScope; --session-id names the session id", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, 'session: { dmScope: "per-channel-peer" },');
    h.llm.enqueue(reply("ok ops"), reply("ok id"));
    const ops = outcomeOf((await h.run(["-m", "x", "--json", "--agent", "ops", "--to", "Bob"])).stdout);
    expect(ops.decisions.runtime).toMatchObject({
      agentId: { value: "ops" },
      sessionKey: { value: "agent:ops:cli:direct:bob" },
    });
    expect(ops.sessionMeta).toMatchObject({ lastTo: "Bob", lastChannel: "cli" });

    const byId = outcomeOf((await h.run(["-m", "y", "--json", "--session-id", "fixed-session-1"])).stdout);
    expect(byId.decisions.runtime).toMatchObject({
      sessionId: { value: "fixed-session-1" },
      sessionKey: { value: "agent:main:main" },
    });
  });

  it("a turn the provider keeps failing exits 1 with the reason on stderr, and the run is stored as failed", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(fault("auth", { times: "always" }));
    const result = await h.run(["-m", "hi"]);
    expect(result.code).toBe(EXIT.failed);
    expect(result.stderr).toMatch(/^agent: run \S+ ended error \(auth/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const runs = JSON.parse((await h.run(["runs", "list", "--json"])).stdout) as { status: string }[];
    expect(runs[0]?.status).toBe("failed");
  });

  it("the state dir comes from $AGENT_KERNEL_STATE_DIR and the config from $AGENT_KERNEL_CONFIG without flags", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply("env ok"));
    const stateDir = join(h.root, "env-state");
    const result = await h.run(["-m", "hi"], {
      bare: true,
      env: { AGENT_KERNEL_CONFIG: h.configPath, AGENT_KERNEL_STATE_DIR: stateDir },
    });
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toBe("env ok\n");
    expect(existsSync(join(stateDir, "state", "kernel.sqlite"))).toBe(true);
    expect(existsSync(h.stateDir)).toBe(false);
  });
});
