import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  getHistoryLimitFromSessionKey,
  type HistoryLimitConfig,
  type HistoryLimitRoute,
  limitHistoryTurns,
  SESSION_HISTORY_PRELUDE,
} from "./limit-turns.ts";

const fixtures = join(import.meta.dirname, "../../fixtures/openclaw");

interface FixtureMessage {
  readonly role: string;
  readonly content: string;
  readonly prelude?: boolean;
}
interface LimitVector {
  readonly messages: readonly FixtureMessage[];
  readonly limit: number | null;
  readonly keptIndexes: readonly number[];
  readonly sameArray: boolean;
}
interface KeyVector {
  readonly sessionKey: string;
  readonly route: HistoryLimitRoute | null;
  readonly configMissing?: boolean;
  readonly limit: number | null;
}

const limitFixture = JSON.parse(readFileSync(join(fixtures, "history-limit.json"), "utf8")) as {
  vectors: LimitVector[];
};
const keyFixture = JSON.parse(readFileSync(join(fixtures, "history-session-key.json"), "utf8")) as {
  config: HistoryLimitConfig;
  vectors: KeyVector[];
};

describe("limitHistoryTurns matches OpenClaw 2026.9.6", () => {
  it.each(limitFixture.vectors.map((vector, index) => [index, vector] as const))(
    "vector %i",
    (_index, vector) => {
      const messages = vector.messages.map((message) =>
        message.prelude
          ? { role: message.role, content: message.content, [SESSION_HISTORY_PRELUDE]: true }
          : message,
      );
      const result = limitHistoryTurns(messages, vector.limit ?? undefined);
      expect(result.map((message) => messages.indexOf(message))).toEqual(vector.keptIndexes);
      expect(result === messages).toBe(vector.sameArray);
    },
  );

  it("has vectors that trim and vectors that keep everything", () => {
    expect(limitFixture.vectors.filter((vector) => !vector.sameArray).length).toBeGreaterThan(20);
    expect(limitFixture.vectors.filter((vector) => vector.sameArray).length).toBeGreaterThan(20);
  });

  it("never drops leading summaries and keeps between target and 1.5×target user turns once trimming", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 12 }), (turns, limit) => {
        const messages = [{ role: "compactionSummary" }];
        for (let turn = 0; turn < turns; turn++) messages.push({ role: "user" }, { role: "assistant" });
        const result = limitHistoryTurns(messages, limit);
        expect(result[0]).toBe(messages[0]);
        const users = result.filter((message) => message.role === "user").length;
        if (turns <= Math.ceil(limit * 1.5)) expect(users).toBe(turns);
        else {
          expect(users).toBeGreaterThanOrEqual(limit);
          expect(users).toBeLessThanOrEqual(Math.ceil(limit * 1.5));
        }
      }),
    );
  });
});

describe("getHistoryLimitFromSessionKey matches OpenClaw 2026.9.6", () => {
  it.each(keyFixture.vectors.map((vector, index) => [index, vector] as const))(
    "vector %i",
    (_index, vector) => {
      const config = vector.configMissing ? undefined : keyFixture.config;
      expect(
        getHistoryLimitFromSessionKey(vector.sessionKey, config, vector.route ?? undefined) ?? null,
      ).toBe(vector.limit);
    },
  );

  it("separates DM and group limits of the same channel", () => {
    const config = { channels: { telegram: { dmHistoryLimit: 5, historyLimit: 50 } } };
    expect(getHistoryLimitFromSessionKey("agent:main:telegram:direct:42", config)).toBe(5);
    expect(getHistoryLimitFromSessionKey("agent:main:telegram:group:-1", config)).toBe(50);
    expect(getHistoryLimitFromSessionKey("agent:main:main", config)).toBeUndefined();
  });
});
