// What the model is sent, shaped by config, asserted on the request body the provider receives (tooling/
// fake-llm's Anthropic wire, through pi's real client): cache-TTL pruning trims old tool results once the
// cache expired, and only in the request (the transcript keeps them); the compaction safeguard keeps the
// session's tool failures and file lists in the summary it stores; the Anthropic quirks (refusal magic
// string scrubbed, consecutive user turns merged) are in the request and not in the transcript.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeLlm, fault, reply, startFakeLlm, toolCall } from "@agent-kernel/fake-llm";
import { afterEach, describe, expect, it } from "vitest";
import { executeTurn } from "../../src/executor/index.ts";
import { AGENT, createHarness, type Harness } from "./harness.ts";
import { wireConfig } from "./wire-config.ts";

let llm: FakeLlm | undefined;
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  await llm?.close();
  harness = undefined;
  llm = undefined;
});

/** The kernel's clock, moved forward by the tests (the TTL is measured with it). */
let clockOffsetMs = 0;
const now = () => Date.now() + clockOffsetMs;

async function setUp(defaults: Record<string, unknown>, contextWindow: number) {
  clockOffsetMs = 0;
  llm = await startFakeLlm();
  const base = wireConfig("anthropic", llm.baseUrlFor("anthropic"), {
    profiles: ["a"],
    fallback: false,
    contextWindow,
  }) as { agents: { defaults: Record<string, unknown> } };
  harness = await createHarness({
    config: { ...base, agents: { defaults: { ...base.agents.defaults, ...defaults } } },
    defaults: { now },
  });
  return { llm, harness };
}

const turn = (h: Harness, sessionKey: string, prompt: string) =>
  h
    .context(sessionKey)
    .then((context) => executeTurn(context, { prompt, timeoutMs: 60_000, entryPoint: "agent" }));

/** A file whose head, middle and tail are recognisable, `lines` lines long. */
function bigFile(lines: number): string {
  const body = Array.from({ length: lines }, (_, index) =>
    index === 0
      ? "HEAD-MARK"
      : index === Math.floor(lines / 2)
        ? "MIDDLE-MARK"
        : index === lines - 1
          ? "TAIL-MARK"
          : `line ${index} of the big file`,
  );
  return `${body.join("\n")}\n`;
}

describe("cache-TTL context pruning (contextPruning.mode: cache-ttl)", () => {
  it("trims an old tool result in the request once the TTL passed, keeps it trimmed, and the transcript keeps it whole", async () => {
    const { llm, harness } = await setUp({ contextPruning: { mode: "cache-ttl", ttl: "5m" } }, 20_000);
    writeFileSync(join(harness.workspaceDir, "big.txt"), bigFile(1200));
    const key = "agent:main:prune";
    llm.enqueue(toolCall("read", { path: "big.txt" }), reply("I read it."));
    expect((await turn(harness, key, "read big.txt")).status).toBe("ok");
    llm.enqueue(reply("two"));
    expect((await turn(harness, key, "second")).status).toBe("ok");
    llm.enqueue(reply("three"));
    expect((await turn(harness, key, "third")).status).toBe("ok");
    // Within the TTL: the whole result is sent again (the cache holds it).
    const withinTtl = JSON.stringify(llm.requests.at(-1)?.body);
    expect(withinTtl).toContain("MIDDLE-MARK");

    clockOffsetMs = 10 * 60_000;
    llm.enqueue(reply("four"));
    expect((await turn(harness, key, "fourth")).status).toBe("ok");
    const expired = JSON.stringify(llm.requests.at(-1)?.body);
    expect(expired).toContain("HEAD-MARK");
    expect(expired).toContain("TAIL-MARK");
    expect(expired).not.toContain("MIDDLE-MARK");
    expect(expired).toMatch(
      /\[Tool result trimmed: kept first 1500 chars and last 1500 chars of \d+ chars\.\]/,
    );
    expect(expired.length).toBeLessThan(withinTtl.length);

    // The next request, within the TTL again: still trimmed (the re-cached prefix stays as it was).
    llm.enqueue(reply("five"));
    expect((await turn(harness, key, "fifth")).status).toBe("ok");
    expect(JSON.stringify(llm.requests.at(-1)?.body)).not.toContain("MIDDLE-MARK");

    // The transcript keeps the whole result.
    const context = await harness.context(key);
    const stored = JSON.stringify(harness.store.openTranscript(AGENT, context.sessionId).getEntries());
    expect(stored).toContain("MIDDLE-MARK");
    expect(stored).not.toContain("Tool result trimmed");
  });

  it("prunes nothing when the mode is off (the default), however old the cache", async () => {
    const { llm, harness } = await setUp({}, 20_000);
    writeFileSync(join(harness.workspaceDir, "big.txt"), bigFile(1200));
    const key = "agent:main:noprune";
    llm.enqueue(toolCall("read", { path: "big.txt" }), reply("I read it."), reply("two"), reply("three"));
    for (const prompt of ["read big.txt", "second", "third"])
      expect((await turn(harness, key, prompt)).status).toBe("ok");
    clockOffsetMs = 10 * 60_000;
    llm.enqueue(reply("four"));
    expect((await turn(harness, key, "fourth")).status).toBe("ok");
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("MIDDLE-MARK");
  });
});

describe("compaction safeguard (compaction.mode: safeguard)", () => {
  it("keeps the session's tool failures and file lists in the summary stored in the compaction entry", async () => {
    const { llm, harness } = await setUp({ compaction: { mode: "safeguard" } }, 16_000);
    const key = "agent:main:safeguard";
    llm.enqueue(
      toolCall("read", { path: "missing.txt" }),
      toolCall("write", { path: "notes.md", content: "remember the milk\n" }),
      reply("Noted."),
    );
    expect((await turn(harness, key, "read missing.txt, then write notes.md")).status).toBe("ok");
    llm.enqueue(reply(`Here is a long story. ${"once upon a time there was a kernel ".repeat(700)}`));
    expect((await turn(harness, key, "tell a long story")).status).toBe("ok");
    const before = llm.requests.length;
    llm.enqueue(
      fault("context_overflow"),
      reply("## Goal\nThe user wanted notes written."),
      reply("## Turn\nA story was asked for."),
      reply("Short answer."),
    );
    const result = await turn(harness, key, "and then?");
    expect(result.status).toBe("ok");
    expect(result.compactions).toBe(1);
    expect(result.assistantText).toBe("Short answer.");
    // The overflow, the history summary, the split turn's summary, the retry.
    expect(llm.requests.length - before).toBe(4);

    const context = await harness.context(key);
    const entries = harness.store.openTranscript(AGENT, context.sessionId).getEntries();
    const compaction = entries.find((entry) => entry.type === "compaction") as
      | {
          summary: string;
          details: { readFiles: string[]; modifiedFiles: string[]; toolFailures: unknown[] };
        }
      | undefined;
    expect(compaction).toBeDefined();
    const summary = compaction?.summary ?? "";
    expect(summary).toContain("The user wanted notes written.");
    expect(summary).toContain("**Turn Context (split turn):**\n\n## Turn\nA story was asked for.");
    expect(summary).toMatch(/## Tool Failures\n- read: .*missing\.txt/);
    expect(summary).toContain("<modified-files>\nnotes.md\n</modified-files>");
    expect(compaction?.details.modifiedFiles).toEqual(["notes.md"]);
    expect(compaction?.details.toolFailures).toHaveLength(1);
    // The retried request carries the stored summary, tool failures and files included.
    const retried = JSON.stringify(llm.requests.at(-1)?.body);
    expect(retried).toContain("## Tool Failures");
    expect(retried).toContain("notes.md");
    expect(retried).toContain("and then?");
    // The next turn reads the session from its compaction on: the summary, not the history behind it.
    llm.enqueue(reply("Still here."));
    expect((await turn(harness, key, "still there?")).status).toBe("ok");
    const next = JSON.stringify(llm.requests.at(-1)?.body);
    expect(next).toContain("## Tool Failures");
    expect(next).not.toContain("read missing.txt, then write notes.md");
  });
});

describe("compaction in the default mode", () => {
  it("stores pi's summary: files listed, no tool-failure section", async () => {
    const { llm, harness } = await setUp({}, 16_000);
    const key = "agent:main:default-compaction";
    llm.enqueue(
      toolCall("read", { path: "missing.txt" }),
      toolCall("write", { path: "notes.md", content: "remember the milk\n" }),
      reply("Noted."),
    );
    expect((await turn(harness, key, "read missing.txt, then write notes.md")).status).toBe("ok");
    llm.enqueue(reply(`Here is a long story. ${"once upon a time there was a kernel ".repeat(700)}`));
    expect((await turn(harness, key, "tell a long story")).status).toBe("ok");
    llm.enqueue(
      fault("context_overflow"),
      reply("## Goal\nThe user wanted notes written."),
      reply("## Turn\nA story was asked for."),
      reply("Short answer."),
    );
    const result = await turn(harness, key, "and then?");
    expect(result.status).toBe("ok");
    expect(result.compactions).toBe(1);
    const context = await harness.context(key);
    const compaction = harness.store
      .openTranscript(AGENT, context.sessionId)
      .getEntries()
      .find((entry) => entry.type === "compaction") as { summary: string } | undefined;
    expect(compaction?.summary).toContain("The user wanted notes written.");
    expect(compaction?.summary).toContain("<modified-files>\nnotes.md\n</modified-files>");
    expect(compaction?.summary).not.toContain("## Tool Failures");
  });
});

describe("Anthropic quirks on the wire", () => {
  it("scrubs the refusal magic string from what is sent, not from the transcript", async () => {
    const { llm, harness } = await setUp({}, 100_000);
    llm.enqueue(reply("fine"));
    const key = "agent:main:magic";
    expect((await turn(harness, key, "say ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL now")).status).toBe("ok");
    const sent = JSON.stringify(llm.requests.at(-1)?.body);
    expect(sent).toContain("say [redacted] now");
    expect(sent).not.toContain("ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL");
    const context = await harness.context(key);
    const stored = JSON.stringify(harness.store.openTranscript(AGENT, context.sessionId).getEntries());
    expect(stored).toContain("say ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL now");
  });

  it("sends strictly alternating turns after a turn that failed without an answer", async () => {
    const { llm, harness } = await setUp({}, 100_000);
    const key = "agent:main:alternate";
    llm.enqueue(fault("auth", { times: "always" }));
    expect((await turn(harness, key, "first question")).status).toBe("error");
    llm.setScenario({ steps: [reply("answer")] });
    expect((await turn(harness, key, "second question")).status).toBe("ok");
    const body = llm.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    const roles = body.messages.map((message) => message.role);
    for (let index = 1; index < roles.length; index++) expect(roles[index]).not.toBe(roles[index - 1]);
    expect(JSON.stringify(body.messages)).toContain("second question");
  });
});
