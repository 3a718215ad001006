import { signSlackRequest } from "@agent-kernel/fake-slack";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { computeSlackSignature, verifySlackSignature } from "./signature.ts";

const now = 1_700_000_000;

describe("verifySlackSignature", () => {
  it("matches Slack's documented signature base string (checked against the fake's independent signer)", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), (secret, body) => {
        expect(computeSlackSignature(secret, String(now), body)).toBe(signSlackRequest(secret, now, body));
        expect(
          verifySlackSignature({
            signingSecret: secret,
            timestamp: String(now),
            signature: signSlackRequest(secret, now, body),
            rawBody: Buffer.from(body),
            nowSeconds: now,
          }),
        ).toEqual({ ok: true });
      }),
    );
  });

  it("accepts exactly five minutes of clock difference and no more", () => {
    const check = (timestamp: number) =>
      verifySlackSignature({
        signingSecret: "s",
        timestamp: String(timestamp),
        signature: signSlackRequest("s", timestamp, "{}"),
        rawBody: "{}",
        nowSeconds: now,
      });
    expect(check(now - 300)).toEqual({ ok: true });
    expect(check(now + 300)).toEqual({ ok: true });
    expect(check(now - 301)).toEqual({ ok: false, reason: "stale-timestamp" });
    expect(check(now + 301)).toEqual({ ok: false, reason: "stale-timestamp" });
  });

  it("names what is wrong", () => {
    const base = { signingSecret: "s", rawBody: "{}", nowSeconds: now };
    expect(verifySlackSignature({ ...base, timestamp: undefined, signature: "v0=1" }).ok).toBe(false);
    expect(verifySlackSignature({ ...base, timestamp: "12ab", signature: "v0=1" })).toEqual({
      ok: false,
      reason: "bad-timestamp",
    });
    expect(verifySlackSignature({ ...base, timestamp: String(now), signature: "v0=1" })).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    // only the canonical decimal: a leading zero names the same second but is not what Slack sends (Bolt
    // refuses it too), and a correctly signed one is still refused
    for (const timestamp of [`0${now}`, "00", `+${now}`, `${now}.0`, "1e9", ` ${now}`]) {
      // signed over exactly this timestamp text: only its form is wrong
      const signature = computeSlackSignature("s", timestamp, "{}");
      expect({ timestamp, check: verifySlackSignature({ ...base, timestamp, signature }) }).toEqual({
        timestamp,
        check: { ok: false, reason: "bad-timestamp" },
      });
    }
    // stricter than Bolt, kept on purpose: ten minutes ahead, and trailing junk after the hash
    const ahead = now + 600;
    expect(
      verifySlackSignature({
        ...base,
        timestamp: String(ahead),
        signature: signSlackRequest("s", ahead, "{}"),
      }),
    ).toEqual({ ok: false, reason: "stale-timestamp" });
    const junk = `${signSlackRequest("s", now, "{}")}=junk`;
    expect(verifySlackSignature({ ...base, timestamp: String(now), signature: junk })).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    const wrongSecret = signSlackRequest("other", now, "{}");
    expect(verifySlackSignature({ ...base, timestamp: String(now), signature: wrongSecret })).toEqual({
      ok: false,
      reason: "bad-signature",
    });
  });
});
