import { describe, expect, it } from "vitest";
import { loadParityCases } from "../test/parity-fixtures.ts";
import {
  classifyFailover,
  type FailoverReason,
  type FailoverSignal,
  failoverStatus,
  isCompactionFailureError,
  isContextOverflowError,
  isLikelyContextOverflowError,
} from "./classify-error.ts";

/** OpenClaw returns `{kind:"reason",reason}` or `{kind:"context_overflow"}`; we return the reason. */
function expectedReason(output: unknown): FailoverReason | null {
  if (output === null || typeof output !== "object") return null;
  const classification = output as { kind: string; reason?: FailoverReason };
  return classification.kind === "context_overflow" ? "context_overflow" : (classification.reason ?? null);
}

describe("error classification: parity with OpenClaw 2026.9.6", () => {
  const signals = loadParityCases("error-classify", "classifyFailoverSignal");

  it("covers a wide corpus (sources, docs and generated variants)", () => {
    expect(signals.length).toBeGreaterThan(2000);
    const reasons = new Set(signals.map((c) => expectedReason(c.output)));
    for (const reason of [
      "rate_limit",
      "overloaded",
      "billing",
      "auth",
      "auth_permanent",
      "timeout",
      "format",
    ]) {
      expect(reasons).toContain(reason);
    }
    expect(reasons).toContain("context_overflow");
    expect(reasons).toContain("model_not_found");
  });

  it("classifyFailover matches every recorded signal", () => {
    const mismatches = signals
      .map((c) => ({
        input: c.input,
        expected: expectedReason(c.output),
        actual: classifyFailover(c.input as FailoverSignal),
      }))
      .filter((m) => m.actual !== m.expected);
    expect(mismatches).toEqual([]);
  });

  const predicates: Record<string, (message: string) => boolean> = {
    isContextOverflowError,
    isLikelyContextOverflowError,
    isCompactionFailureError,
  };
  for (const [fn, predicate] of Object.entries(predicates)) {
    it(`${fn} matches every recorded message`, () => {
      const cases = loadParityCases("error-classify", fn);
      expect(cases.length).toBeGreaterThan(1000);
      const mismatches = cases.filter((c) => predicate(c.input as string) !== c.output);
      expect(mismatches).toEqual([]);
    });
  }

  it("maps reasons to OpenClaw's HTTP-like statuses", () => {
    for (const c of loadParityCases("error-classify", "resolveFailoverStatus")) {
      expect(failoverStatus(c.input as FailoverReason) ?? null).toBe(c.output);
    }
  });
});

describe("error classification: pi-ai's real error messages", () => {
  it("classifies the shapes pi-ai produces for HTTP failures", () => {
    expect(
      classifyFailover({
        message:
          '429: {"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded"}',
      }),
    ).toBe("rate_limit");
    expect(
      classifyFailover({ message: '401: {"message":"Incorrect API key provided","code":"invalid_api_key"}' }),
    ).toBe("auth");
    expect(classifyFailover({ message: "prompt is too long: 210000 tokens > 200000 maximum" })).toBe(
      "context_overflow",
    );
    expect(classifyFailover({ message: "terminated" })).toBe("timeout");
    expect(classifyFailover({ message: "Request was aborted" })).toBeNull();
  });

  it("lets an explicit status override the wording where OpenClaw does", () => {
    expect(classifyFailover({ message: "something odd", status: 503 })).toBe("server_error");
    expect(classifyFailover({ message: "something odd", status: 504 })).toBe("timeout");
    expect(classifyFailover({ message: "Your credit balance is too low", status: 429 })).toBe("billing");
    expect(classifyFailover({ message: "api key revoked", status: 401 })).toBe("auth_permanent");
    expect(classifyFailover({ status: 400, message: "400 status code (no body)" })).toBeNull();
  });
});
