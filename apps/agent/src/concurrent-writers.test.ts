// Several `agent -m` processes on one SQLite session at once (the default deployment: the gateway's DMs and the
// shell share `agent:main:main`). Before cross-process session lanes on SQLite, their turns read the same leaf
// and forked the transcript: user turns fell off the active branch and silently left the model's context.
// Every turn must land on the active branch, whole (user → assistant), one after another.
import { reply } from "@agent-kernel/fake-llm";
import { openKernelStore } from "@agent-kernel/kernel/admin";
import { describe, expect, it } from "vitest";
import { createCliHarness } from "../test/cli-harness.ts";

const PROCESSES = 6;

interface MessageEntry {
  readonly type: string;
  readonly message: { readonly role: string; readonly content: unknown };
}

function textOf(entry: MessageEntry): string {
  const { content } = entry.message;
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string }[])
    .filter((part) => part.type === "text")
    .map((part) => part.text ?? "")
    .join("");
}

describe("concurrent agent -m on one SQLite session", () => {
  it(`${PROCESSES} processes at once: every user turn on the active branch, in a serial order`, async ({
    onTestFinished,
  }) => {
    const cli = await createCliHarness();
    onTestFinished(() => cli.close());
    // Each answer streams for a while, so the turns overlap unless something makes them wait.
    cli.llm.setScenario({
      fallback: reply("answer part one. answer part two. answer part three.", { delayMs: 40 }),
    });
    const results = await Promise.all(
      Array.from({ length: PROCESSES }, (_, index) =>
        cli.run(["-m", `question ${index}`, "--no-stream", "--timeout", "120"]),
      ),
    );
    for (const result of results) expect(result.stderr, result.stderr).not.toMatch(/error/i);
    expect(results.map((result) => result.code)).toEqual(Array(PROCESSES).fill(0));

    const store = await openKernelStore({ stateDir: cli.stateDir });
    onTestFinished(() => store.close());
    const session = await store.sessions.get({ agentId: "main", sessionKey: "agent:main:main" });
    expect(session).toBeDefined();
    const transcript = store.openTranscript("main", session?.sessionId ?? "");
    const branch = transcript
      .getBranch()
      .filter((entry) => entry.type === "message") as unknown as MessageEntry[];
    // The system prompt is stored too (a `system` message when it changes); the turns are the rest.
    const roles = branch.map((entry) => entry.message.role).filter((role) => role !== "system");
    // Serial: user, assistant, user, assistant, ... — no turn interleaved with another.
    expect(roles).toEqual(Array.from({ length: PROCESSES }, () => ["user", "assistant"]).flat());
    const questions = branch.filter((entry) => entry.message.role === "user").map(textOf);
    expect([...questions].sort()).toEqual(
      Array.from({ length: PROCESSES }, (_, index) => `question ${index}`).sort(),
    );
    // Nothing off the branch: every message stored is on it.
    const stored = transcript.getEntries().filter((entry) => entry.type === "message");
    expect(stored.length).toBe(branch.length);
    // Each later turn saw every earlier one: the model was sent the whole history so far.
    const userCounts = cli.llm.requests
      .map((request) => (request.body as { messages?: { role: string }[] }).messages ?? [])
      .map((messages) => messages.filter((message) => message.role === "user").length)
      .sort((a, b) => a - b);
    expect(userCounts).toEqual(Array.from({ length: PROCESSES }, (_, index) => index + 1));
  }, 240_000);
});

describe("a session busy in another process", () => {
  it("a turn waits in line for it, bounded by its timeout, and says why it gave up", async ({
    onTestFinished,
  }) => {
    const cli = await createCliHarness();
    onTestFinished(() => cli.close());
    // The first turn streams for about 5 s; the second may wait 2 s.
    cli.llm.setScenario({ steps: [reply("tick ", { repeat: 50, delayMs: 100 }), reply("second answer")] });
    const first = cli.run(["-m", "long one", "--no-stream", "--timeout", "120"]);
    await waitFor(() => cli.llm.requests.length > 0);
    const second = await cli.run(["-m", "short one", "--no-stream", "--timeout", "2"]);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/busy in another process/);
    expect((await first).code).toBe(0);
    // The turn that gave up was never sent to the model and left nothing in the transcript.
    expect(cli.llm.requests).toHaveLength(1);
    const runs = await cli.run(["runs", "list", "--json"]);
    const listed = JSON.parse(runs.stdout) as { status: string; errorMessage?: string }[];
    expect(listed.map((run) => run.status).sort()).toEqual(["succeeded", "timed_out"]);
  }, 120_000);
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
