import { validateInboundMessage } from "@agent-kernel/channels-core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalizeSlackEvent, type SlackIdentity } from "./normalize.ts";

const identity: SlackIdentity = { accountId: "default", botUserId: "UBOT", teamId: "T1" };

describe("normalizeSlackEvent", () => {
  it("drops a message with nothing to answer: blank text and no files", () => {
    for (const text of [undefined, "", "   \n"])
      expect(
        normalizeSlackEvent({ type: "message", user: "U1", channel: "D1", ts: "1.000001", text }, identity),
      ).toBeUndefined();
  });

  it("keeps a file share without text", () => {
    const message = normalizeSlackEvent(
      { type: "message", user: "U1", channel: "D1", ts: "1.000002", files: [{ id: "F1", name: "a.png" }] },
      identity,
    );
    expect(message?.media).toHaveLength(1);
  });

  it("turns any event object into either nothing or a message channels-core accepts", () => {
    const event = fc.record(
      {
        type: fc.constantFrom("message", "app_mention", "reaction_added"),
        user: fc.constantFrom("U1", "UBOT", ""),
        channel: fc.constantFrom("D1", "C1", "G1"),
        ts: fc.constantFrom("1.000001", "1712345678.123456"),
        text: fc.oneof(fc.string(), fc.constant("<@UBOT> hi")),
        thread_ts: fc.constantFrom("1.000001", "2.000002"),
        channel_type: fc.constantFrom("im", "mpim", "channel", "group"),
      },
      { requiredKeys: ["type"] },
    );
    fc.assert(
      fc.property(event, (raw) => {
        const message = normalizeSlackEvent(raw, identity);
        if (message !== undefined) expect(() => validateInboundMessage(message)).not.toThrow();
      }),
    );
  });
});
