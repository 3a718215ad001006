// End to end: pi-ai's real openai-completions and anthropic-messages providers over real HTTP to the fake
// server, for every step type and fault, asserting what pi reports and what the server recorded.
import { isContextOverflow, isRetryableAssistantError } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_KEY, type PiClient, piClient, textOf, WIRES } from "../test/pi-support.ts";
import { OVERFLOW_VARIANTS } from "./faults.ts";
import { type FakeLlm, startFakeLlm } from "./server.ts";
import { fault, reply, toolCall } from "./steps.ts";
import type { FaultName } from "./types.ts";

let llm: FakeLlm;
let pi: PiClient;

beforeAll(async () => {
  llm = await startFakeLlm();
  pi = piClient(llm);
});
afterAll(() => llm.close());
beforeEach(() => {
  llm.setScenario({});
  llm.clearRequests();
});

describe.each(WIRES)("%s wire through pi-ai", (wire) => {
  it("streams thinking and text with the scripted usage", async () => {
    llm.enqueue({
      type: "response",
      thinking: "Let me look.",
      text: "It is sunny in Paris.",
      usage: { input: 30, output: 7, cacheRead: 5 },
    });
    const { events, message } = await pi.turn(wire);
    expect(message.stopReason).toBe("stop");
    expect(message.content[0]).toMatchObject({ type: "thinking", thinking: "Let me look." });
    if (wire === "anthropic") expect(message.content[0]).toMatchObject({ thinkingSignature: "sig-fake" });
    expect(textOf(message)).toBe("It is sunny in Paris.");
    expect(message.usage).toMatchObject({
      input: 30,
      output: 7,
      cacheRead: 5,
      cacheWrite: 0,
      totalTokens: 42,
    });
    expect(message.usage.cost.total).toBeGreaterThan(0);
    expect(events.filter((type) => type === "text_delta")).toHaveLength(5);
    expect(events.at(-1)).toBe("done");
    expect(message.responseId).toBe(wire === "openai" ? "chatcmpl-fake-1" : "msg_fake_1");
  });

  it("streams tool calls with incrementally sent JSON arguments", async () => {
    llm.enqueue({
      type: "response",
      text: "Checking.",
      toolCalls: [
        { name: "get_weather", arguments: { city: "Paris" } },
        { id: "mine", name: "get_weather", arguments: { city: "Lyon, France" } },
      ],
      chunkSize: 4,
    });
    const { events, message } = await pi.turn(wire);
    expect(message.stopReason).toBe("toolUse");
    const calls = message.content.filter((block) => block.type === "toolCall");
    expect(calls).toEqual([
      {
        type: "toolCall",
        id: wire === "openai" ? "call_1" : "toolu_1",
        name: "get_weather",
        arguments: { city: "Paris" },
      },
      { type: "toolCall", id: "mine", name: "get_weather", arguments: { city: "Lyon, France" } },
    ]);
    expect(events.filter((type) => type === "toolcall_delta").length).toBeGreaterThanOrEqual(8);
  });

  it("follows explicit content order and a raw stop reason", async () => {
    llm.enqueue({
      type: "response",
      content: [
        { type: "text", text: "Partial answer" },
        { type: "toolCall", name: "get_weather", arguments: { city: "Rome" } },
      ],
      stopReason: "length",
    });
    const { message } = await pi.turn(wire);
    expect(message.stopReason).toBe("length");
    expect(message.content.map((block) => block.type)).toEqual(["text", "toolCall"]);
  });

  it("records what pi sent, with the API key redacted to its last 4 characters", async () => {
    llm.enqueue(reply("ok"));
    await pi.turn(wire);
    const [request] = llm.requests;
    expect(request).toMatchObject({
      index: 0,
      provider: wire,
      method: "POST",
      stream: true,
      served: "response",
    });
    expect(request?.apiKeySuffix).toBe(DEFAULT_KEY[wire].slice(-4));
    expect(JSON.stringify(request?.headers)).not.toContain(DEFAULT_KEY[wire]);
    expect(request?.model).toBe("fake-model");
    const body = request?.body as Record<string, unknown>;
    if (wire === "openai") {
      expect(request?.path).toBe("/v1/chat/completions");
      expect(request?.headers.authorization).toBe(`Bearer …${DEFAULT_KEY.openai.slice(-4)}`);
      expect(body.messages).toEqual([
        { role: "system", content: "Be brief." },
        { role: "user", content: "What is the weather in Paris?" },
      ]);
      expect(body.stream_options).toEqual({ include_usage: true });
    } else {
      expect(request?.path).toBe("/v1/messages?beta=true");
      expect(request?.headers["x-api-key"]).toBe(`…${DEFAULT_KEY.anthropic.slice(-4)}`);
      expect(body.system).toEqual([
        { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
      ]);
      expect(body.messages).toEqual([
        {
          role: "user",
          content: [
            { type: "text", text: "What is the weather in Paris?", cache_control: { type: "ephemeral" } },
          ],
        },
      ]);
    }
    expect(JSON.stringify(body.tools)).toContain("get_weather");
  });

  it.each<[FaultName, number, boolean]>([
    ["rate_limit", 429, true],
    ["auth", 401, false],
    ["billing", 402, false],
    ["server_error", 500, true],
    ["overloaded", 529, true],
    ["unavailable", 503, true],
  ])("surfaces the %s fault as HTTP %i (retryable: %s)", async (name, status, retryable) => {
    llm.enqueue(fault(name));
    const { events, message } = await pi.turn(wire);
    expect(events).toEqual(["error"]);
    expect(message.stopReason).toBe("error");
    expect(message.content).toEqual([]);
    expect(message.errorMessage).toMatch(new RegExp(`^${status}:? `));
    expect(isRetryableAssistantError(message)).toBe(retryable);
    expect(isContextOverflow(message, 128_000)).toBe(false);
    expect(llm.requests[0]?.served).toBe(`error:${name}`);
  });

  it("surfaces each provider wording of a context overflow as one pi recognises", async () => {
    for (const variant of OVERFLOW_VARIANTS) {
      llm.enqueue(fault("context_overflow", { variant }));
      const { message } = await pi.turn(wire);
      expect(message.stopReason, variant).toBe("error");
      expect(isContextOverflow(message, 128_000), `${variant}: ${message.errorMessage}`).toBe(true);
      expect(isRetryableAssistantError(message), variant).toBe(false);
    }
  });

  it("lets status and message be overridden (OpenAI's insufficient_quota arrives as a 429)", async () => {
    llm.enqueue(fault("billing", { status: 429, message: "You exceeded your current quota." }));
    const { message } = await pi.turn(wire);
    expect(message.errorMessage).toMatch(/^429:? .*You exceeded your current quota\./);
  });

  it("does not retry a 429 by itself; with maxRetries it honours retry-after-ms and succeeds", async () => {
    llm.enqueue(fault("rate_limit", { retryAfterMs: 5 }), reply("after the wait"));
    const first = await pi.turn(wire);
    expect(first.message.stopReason).toBe("error");
    expect(llm.requests).toHaveLength(1);
    const second = await pi.turn(wire, { maxRetries: 1 });
    expect(second.message.stopReason).toBe("stop");
    expect(textOf(second.message)).toBe("after the wait");
    expect(llm.requests).toHaveLength(2);

    llm.enqueue(fault("rate_limit", { retryAfterMs: 1, times: 2 }), reply("third time"));
    const third = await pi.turn(wire, { maxRetries: 2 });
    expect(textOf(third.message)).toBe("third time");
    expect(llm.requests.map((request) => request.served)).toEqual([
      "error:rate_limit",
      "response",
      "error:rate_limit",
      "error:rate_limit",
      "response",
    ]);
  });

  it("fails at once when retry-after exceeds maxRetryDelayMs", async () => {
    llm.enqueue(fault("rate_limit", { retryAfterSeconds: 120 }));
    const { message } = await pi.turn(wire, { maxRetries: 3 });
    expect(message.errorMessage).toMatch(/^Server requested 120s retry delay \(max: 60s\)/);
    expect(llm.requests).toHaveLength(1);
  });

  it("resets the stream mid-message: pi keeps the partial text and reports 'terminated'", async () => {
    llm.enqueue({ type: "reset", text: "Hello from the local mock", afterDeltas: 3 });
    const { message } = await pi.turn(wire);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBe("terminated");
    expect(textOf(message)).toBe("Hello from the");
    expect(isRetryableAssistantError(message)).toBe(true);
  });

  it("stalls until the client aborts: pi reports aborted with the partial text", async () => {
    llm.enqueue({ type: "stall", text: "Hello from the void", afterDeltas: 2 });
    const controller = new AbortController();
    const turn = pi.turn(wire, { signal: controller.signal });
    await waitFor(() => llm.requests.length === 1);
    setTimeout(() => controller.abort(), 20);
    const { message } = await turn;
    expect(message.stopReason).toBe("aborted");
    expect(message.errorMessage).toBe(
      wire === "openai" ? "Request was aborted" : "This operation was aborted",
    );
    expect(textOf(message)).toBe("Hello from");
  });

  it("repeats a text as it streams; a client that goes away ends an endless one", async () => {
    llm.enqueue(reply("ab ", { chunkSize: 3, repeat: 4 }));
    const { events, message } = await pi.turn(wire);
    expect(textOf(message)).toBe("ab ab ab ab ");
    expect(events.filter((type) => type === "text_delta")).toHaveLength(4);

    llm.enqueue(reply("tick ", { chunkSize: 5, repeat: Number.MAX_SAFE_INTEGER, delayMs: 1 }));
    const controller = new AbortController();
    const turn = pi.turn(wire, { signal: controller.signal });
    await waitFor(() => llm.requests.length === 2);
    setTimeout(() => controller.abort(), 50);
    const endless = await turn;
    expect(endless.message.stopReason).toBe("aborted");
    expect(textOf(endless.message)).toMatch(/^(tick )+/);
  });

  it("sends malformed SSE: pi reports a parse error", async () => {
    llm.enqueue({ type: "malformed", text: "Hello there", afterDeltas: 1 });
    const quiet = silenceConsoleError();
    const { message } = await pi.turn(wire).finally(quiet);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(/not valid JSON/);
    expect(textOf(message)).toBe("Hello");
  });

  it("sends an in-stream overloaded error after some text", async () => {
    llm.enqueue({ type: "stream_error", text: "Hello there", afterDeltas: 1 });
    const { message } = await pi.turn(wire);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toContain("overloaded");
    expect(isRetryableAssistantError(message)).toBe(true);
    expect(textOf(message)).toBe("Hello");
  });

  it("answers an unscripted request with a non-retryable 400 naming it", async () => {
    const { message } = await pi.turn(wire);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toContain("fake-llm: no scripted step left for request #0");
    expect(isRetryableAssistantError(message)).toBe(false);
    expect(llm.requests[0]?.served).toBeNull();
  });
});

describe("routing", () => {
  it("routes by API key suffix (per-profile rate limits) before the global queue", async () => {
    llm.setScenario({
      rules: [
        {
          name: "profile-a",
          when: { apiKeySuffix: "AAAA" },
          steps: [fault("rate_limit", { times: "always" })],
        },
      ],
      steps: [reply("from B")],
    });
    const a = await pi.turn("openai", { apiKey: "sk-profile-AAAA" });
    const b = await pi.turn("openai", { apiKey: "sk-profile-BBBB" });
    const aAgain = await pi.turn("anthropic", { apiKey: "sk-ant-AAAA" });
    expect(a.message.errorMessage).toMatch(/^429: /);
    expect(textOf(b.message)).toBe("from B");
    expect(aAgain.message.errorMessage).toMatch(/^429 /);
    expect(llm.requests.map((request) => [request.apiKeySuffix, request.rule])).toEqual([
      ["AAAA", "profile-a"],
      ["BBBB", null],
      ["AAAA", "profile-a"],
    ]);
    expect(llm.pendingSteps()).toBe(1);
  });

  it("routes by model and provider; an exhausted rule falls through", async () => {
    llm.setScenario({
      rules: [
        { when: { model: "big-model" }, steps: [fault("context_overflow")] },
        { when: { provider: "anthropic", model: "big-model" }, steps: [reply("anthropic big")] },
      ],
      fallback: reply("fallback answer"),
    });
    const first = await pi.turn("anthropic", { modelId: "big-model" });
    const second = await pi.turn("anthropic", { modelId: "big-model" });
    const third = await pi.turn("openai", { modelId: "big-model" });
    const other = await pi.turn("openai", { modelId: "small-model" });
    expect(isContextOverflow(first.message)).toBe(true);
    expect(textOf(second.message)).toBe("anthropic big");
    expect(textOf(third.message)).toBe("fallback answer");
    expect(textOf(other.message)).toBe("fallback answer");
    expect(llm.requests.map((request) => request.rule)).toEqual([
      "rules[0]",
      "rules[1]",
      "fallback",
      "fallback",
    ]);
  });

  it("serves a step `times` times, then the next one", async () => {
    llm.enqueue(reply("twice", { times: 2 }), reply("then this"));
    const texts: string[] = [];
    for (let turn = 0; turn < 3; turn += 1) texts.push(textOf((await pi.turn("openai")).message));
    expect(texts).toEqual(["twice", "twice", "then this"]);
    expect(llm.pendingSteps()).toBe(0);
  });

  it("computes a step from the request (echo what the model was sent)", async () => {
    const echo = (request: { body: unknown }) => {
      const messages = (request.body as { messages: { role: string }[] }).messages;
      return reply(
        `you sent ${messages.length} messages: ${messages.map((message) => message.role).join(",")}`,
      );
    };
    llm.setScenario({ fallback: echo });
    const openai = await pi.turn("openai");
    const anthropic = await pi.turn("anthropic");
    expect(textOf(openai.message)).toBe("you sent 2 messages: system,user");
    expect(textOf(anthropic.message)).toBe("you sent 1 messages: user");
  });

  it("adds rules at run time", async () => {
    llm.addRule({
      when: { apiKeySuffix: "CCCC" },
      steps: [toolCall("get_weather", { city: "Oslo" }, { id: "c1" })],
    });
    const { message } = await pi.turn("anthropic", { apiKey: "key-CCCC" });
    expect(message.content).toEqual([
      { type: "toolCall", id: "c1", name: "get_weather", arguments: { city: "Oslo" } },
    ]);
  });
});

describe("plain HTTP", () => {
  it("answers non-streaming requests with a JSON body in each wire format", async () => {
    llm.enqueue(
      {
        type: "response",
        thinking: "hm",
        text: "Hi",
        toolCalls: [{ id: "t1", name: "f", arguments: { a: 1 } }],
      },
      {
        type: "response",
        thinking: "hm",
        text: "Hi",
        toolCalls: [{ id: "t1", name: "f", arguments: { a: 1 } }],
      },
    );
    const openai = await postJson(`${llm.baseUrlFor("openai")}/chat/completions`, {
      model: "m",
      messages: [],
    });
    expect(openai).toMatchObject({
      object: "chat.completion",
      choices: [
        {
          message: {
            role: "assistant",
            content: "Hi",
            reasoning_content: "hm",
            tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
          },
          finish_reason: "tool_calls",
        },
      ],
    });
    const anthropic = await postJson(`${llm.baseUrlFor("anthropic")}/v1/messages`, {
      model: "m",
      messages: [],
    });
    expect(anthropic).toMatchObject({
      type: "message",
      content: [
        { type: "thinking", thinking: "hm", signature: "sig-fake" },
        { type: "text", text: "Hi" },
        { type: "tool_use", id: "t1", name: "f", input: { a: 1 } },
      ],
      stop_reason: "tool_use",
    });
  });

  it("sends retry-after headers and answers unknown routes with 404", async () => {
    llm.enqueue(
      fault("rate_limit", {
        retryAfterSeconds: 2,
        retryAfterMs: 1500,
        headers: { "x-should-retry": "true" },
      }),
    );
    const limited = await fetch(`${llm.url}/v1/messages`, { method: "POST", body: "{}" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(limited.headers.get("retry-after-ms")).toBe("1500");
    expect(limited.headers.get("x-should-retry")).toBe("true");
    expect(await limited.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    const missing = await fetch(`${llm.url}/v1/embeddings`, { method: "POST", body: "{}" });
    expect(missing.status).toBe(404);
    expect(llm.requests.map((request) => request.provider)).toEqual(["anthropic", "unknown"]);
  });

  it("closes with a stalled stream open and a pi request in flight", async () => {
    const own = await startFakeLlm({
      scenario: { steps: [{ type: "stall", text: "a b c", afterDeltas: 1 }] },
    });
    const turn = piClient(own).turn("openai");
    await waitFor(() => own.requests.length === 1);
    await own.close();
    const { message } = await turn;
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBe("terminated");
    await own.close();
    await expect(fetch(`${own.url}/health`)).rejects.toThrow();
  });
});

async function postJson(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return response.json();
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** The OpenAI SDK console.errors a chunk it cannot parse; keep the test output clean. */
function silenceConsoleError(): () => void {
  const original = console.error;
  console.error = () => {};
  return () => {
    console.error = original;
  };
}
