import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KernelInputError, validateSessionInput, validateTurnInput } from "./validate.ts";

describe("validateSessionInput", () => {
  it("accepts a minimal and a full input unchanged", () => {
    expect(validateSessionInput({})).toEqual({});
    const full = {
      agentId: "main",
      sessionKey: "telegram:direct:1",
      sessionId: "abc",
      workspaceDir: "/tmp/w",
      messageContext: {
        channel: "telegram",
        chatType: "direct" as const,
        senderId: "1",
        senderIsOwner: true,
      },
      runOptions: { entryPoint: "auto-reply", model: "openai/gpt-5", thinking: "low", timeoutSeconds: 0 },
    };
    expect(validateSessionInput(full)).toEqual(full);
  });

  it("names every problem with path, expected and found", () => {
    let error: unknown;
    try {
      validateSessionInput({
        agentId: 3,
        messageContext: { chatType: "dm", chanel: "x" },
        runOptions: { queueMode: "later", cronPayload: { primary: "" } },
        config: { not: "a config" },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(KernelInputError);
    const message = (error as Error).message;
    expect(message).toMatch(/^Invalid session input \(6 problems\):/);
    expect(message).toContain("agentId: expected a string, found 3");
    expect(message).toContain(
      'messageContext.chatType: expected one of "direct", "group", "channel", found "dm"',
    );
    expect(message).toContain('messageContext.chanel: unknown key; did you mean "channel"?');
    expect(message).toContain(
      'runOptions.queueMode: expected one of "steer", "followup", "collect", "interrupt", found "later"',
    );
    expect(message).toContain('runOptions.cronPayload.primary: expected a non-empty string, found ""');
    expect(message).toContain(
      "config: expected a parsed KernelConfig (from loadConfig or parseConfig), found an object",
    );
  });

  it("throws only KernelInputError for arbitrary values", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        try {
          validateSessionInput(value);
        } catch (error) {
          expect(error).toBeInstanceOf(KernelInputError);
          expect((error as KernelInputError).issues.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("validateTurnInput", () => {
  it("passes functions and signals through as they are", () => {
    const signal = new AbortController().signal;
    const onAgentEvent = () => {};
    const turn = validateTurnInput({ prompt: "hi", signal, callbacks: { onAgentEvent } });
    expect(turn.signal).toBe(signal);
    expect(turn.callbacks?.onAgentEvent).toBe(onAgentEvent);
  });

  it("rejects bad images, run ids and callbacks", () => {
    expect(() =>
      validateTurnInput({
        prompt: "x",
        images: [{ type: "image", data: "AAAA", mimeType: "text/plain" }],
        runId: "has space",
        callbacks: { onAgentEvent: "nope" },
      }),
    ).toThrow(
      /images\[0\]\.mimeType: expected an image MIME type like "image\/png", found "text\/plain"[\s\S]*runId: expected 1-128 letters[\s\S]*callbacks\.onAgentEvent: expected onAgentEvent \(a function\)/,
    );
    expect(
      validateTurnInput({ prompt: "", images: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }),
    ).toBeDefined();
  });
});
