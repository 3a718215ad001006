import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  KernelInputError,
  TURN_IMAGE_MAX_BYTES,
  TURN_IMAGE_MAX_COUNT,
  validateSessionInput,
  validateTurnInput,
} from "./validate.ts";

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
      /images\[0\]\.mimeType: expected one of "image\/png", "image\/jpeg", "image\/gif", "image\/webp", found "text\/plain"[\s\S]*runId: expected 1-128 letters[\s\S]*callbacks\.onAgentEvent: expected onAgentEvent \(a function\)/,
    );
    expect(
      validateTurnInput({ prompt: "", images: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }),
    ).toBeDefined();
  });

  it("names what is wrong with an image: base64, size, count", () => {
    const png = (data: string) => ({ type: "image", data, mimeType: "image/png" });
    expect(() => validateTurnInput({ prompt: "x", images: [png("data:image/png;base64,AAAA")] })).toThrow(
      /images\[0\]\.data: expected the image's bytes as standard base64 .*no "data:" prefix\), found 26 characters/,
    );
    expect(() => validateTurnInput({ prompt: "x", images: [png("")] })).toThrow(
      "images[0].data: expected the image's bytes as base64, found an empty string",
    );
    // One byte over the cap, encoded (base64 length is a multiple of 4: 3 bytes per 4 characters).
    const over = "A".repeat(Math.ceil((TURN_IMAGE_MAX_BYTES + 1) / 3) * 4);
    expect(() => validateTurnInput({ prompt: "x", images: [png("AAAA"), png(over)] })).toThrow(
      /images\[1\]\.data: expected an image of at most 6\.0 MiB, found 6\.0 MiB/,
    );
    const atCap = "A".repeat((TURN_IMAGE_MAX_BYTES / 3) * 4);
    expect(validateTurnInput({ prompt: "x", images: [png(atCap)] }).images).toHaveLength(1);
    const many = Array.from({ length: TURN_IMAGE_MAX_COUNT + 1 }, () => png("AAAA"));
    expect(() => validateTurnInput({ prompt: "x", images: many })).toThrow(
      `images: expected at most ${TURN_IMAGE_MAX_COUNT} images in one turn, found an array of ${TURN_IMAGE_MAX_COUNT + 1}`,
    );
    expect(() =>
      validateTurnInput({
        prompt: "x",
        images: [{ type: "image", data: "AAAA", mimeType: "image/svg+xml" }],
      }),
    ).toThrow(
      'images[0].mimeType: expected one of "image/png", "image/jpeg", "image/gif", "image/webp", found "image/svg+xml"',
    );
  });
});
