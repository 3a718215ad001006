// `Retry-After` through real HTTP (executor → pi-ai's OpenAI client → tooling/fake-llm): honoured when there is
// nothing to fall back to, within its bounds (60 s, the turn's timeout, 3 waits a turn); with a fallback left
// the chain moves on at once (fake-llm.e2e.test.ts, the 429 rotation).
import { type FakeLlm, fault, reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { afterEach, describe, expect, it } from "vitest";
import { executeTurn } from "../../src/executor/index.ts";
import { MAX_RETRY_AFTER_WAITS } from "../../src/executor/recovery.ts";
import { createHarness, type Harness } from "./harness.ts";
import { wireConfig } from "./wire-config.ts";

let llm: FakeLlm | undefined;
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  await llm?.close();
  harness = undefined;
  llm = undefined;
});

/** One model, one profile: nothing to fall back to. */
async function setUp(): Promise<{ llm: FakeLlm; harness: Harness }> {
  llm = await startFakeLlm();
  harness = await createHarness({
    config: wireConfig("openai", llm.baseUrlFor("openai"), { profiles: ["a"], fallback: false }),
  });
  return { llm, harness };
}

describe("Retry-After with nothing to fall back to", () => {
  it("waits as asked, then retries the same model; the wait is an event and the attempt's action", async () => {
    const { llm, harness } = await setUp();
    llm.enqueue(fault("rate_limit", { retryAfterSeconds: 1 }), reply("after the wait"));
    const context = await harness.context("agent:main:wait");
    const result = await executeTurn(context, { prompt: "hi", timeoutMs: 60_000, entryPoint: "agent" });
    expect(result.status).toBe("ok");
    expect(result.assistantText).toBe("after the wait");
    expect(result.attempts.map((a) => [a.reason ?? "ok", a.action ?? "-"])).toEqual([
      ["rate_limit", "retry_after:1000ms"],
      ["ok", "-"],
    ]);
    const waits = result.events.filter((e) => e.stream === "lifecycle" && e.data.phase === "retry_wait");
    expect(waits.map((e) => e.data)).toEqual([
      expect.objectContaining({ attempt: 1, reason: "rate_limit", waitMs: 1000 }),
    ]);
    const [first, second] = llm.requests;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("a wait over 60 s, or past the turn's timeout, is not waited for: the rate limit surfaces at once", async () => {
    const { llm, harness } = await setUp();
    llm.enqueue(fault("rate_limit", { retryAfterSeconds: 120 }));
    const long = await executeTurn(await harness.context("agent:main:long"), {
      prompt: "hi",
      timeoutMs: 300_000,
      entryPoint: "agent",
    });
    expect([long.status, long.reason]).toEqual(["error", "rate_limit"]);
    expect(llm.requests).toHaveLength(1);

    llm.enqueue(fault("rate_limit", { retryAfterSeconds: 20 }));
    const started = Date.now();
    const short = await executeTurn(await harness.context("agent:main:short"), {
      prompt: "hi",
      timeoutMs: 10_000,
      entryPoint: "agent",
    });
    expect([short.status, short.reason]).toEqual(["error", "rate_limit"]);
    expect(llm.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it(`waits at most ${MAX_RETRY_AFTER_WAITS} times a turn`, async () => {
    const { llm, harness } = await setUp();
    llm.enqueue(fault("rate_limit", { retryAfterMs: 200, times: "always" }));
    const result = await executeTurn(await harness.context("agent:main:always"), {
      prompt: "hi",
      timeoutMs: 60_000,
      entryPoint: "agent",
    });
    expect([result.status, result.reason]).toEqual(["error", "rate_limit"]);
    expect(llm.requests).toHaveLength(MAX_RETRY_AFTER_WAITS + 1);
    expect(result.attempts.at(-1)?.action).toBe("surface");
  });
});
