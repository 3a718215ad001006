import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadParityCases } from "../test/parity-fixtures.ts";
import {
  buildAgentMainSessionKey,
  buildAgentPeerSessionKey,
  buildCronSessionKey,
  buildHookSessionKey,
  buildSubagentSessionKey,
  classifySessionKeyShape,
  getSubagentDepth,
  isAcpSessionKey,
  isCronSessionKey,
  isSubagentSessionKey,
  isValidAgentId,
  normalizeAgentId,
  type PeerSessionKeyParams,
  parseAgentSessionKey,
  parseCronRunScopeSuffix,
  parseThreadSessionSuffix,
  resolveAgentIdFromSessionKey,
  resolveThreadSessionKeys,
  toAgentRequestSessionKey,
  toAgentStoreSessionKey,
} from "./session-key.ts";

type Fn = (input: never) => unknown;
const single: Record<string, Fn> = {
  normalizeAgentId,
  isValidAgentId,
  parseAgentSessionKey,
  classifySessionKeyShape,
  toAgentRequestSessionKey: (key: string) => toAgentRequestSessionKey(key) ?? null,
  parseThreadSessionSuffix: (key: string) => JSON.parse(JSON.stringify(parseThreadSessionSuffix(key))),
  getSubagentDepth,
  isCronSessionKey,
  isSubagentSessionKey,
  isAcpSessionKey,
  parseCronRunScopeSuffix: (key: string) => JSON.parse(JSON.stringify(parseCronRunScopeSuffix(key))),
  buildAgentPeerSessionKey: (params: PeerSessionKeyParams) => buildAgentPeerSessionKey(params),
  buildAgentMainSessionKey: (params: { agentId: string; mainKey?: string }) =>
    buildAgentMainSessionKey(params),
  toAgentStoreSessionKey: (params: { agentId: string; requestKey?: string; mainKey?: string }) =>
    toAgentStoreSessionKey(params),
  resolveThreadSessionKeys: (params: { baseSessionKey: string; threadId?: string; useSuffix?: boolean }) =>
    JSON.parse(JSON.stringify(resolveThreadSessionKeys(params))),
};

describe("session keys: parity with OpenClaw 2026.9.6", () => {
  const cases = loadParityCases("session-key");

  it("has hundreds of recorded cases for every function", () => {
    expect(cases.length).toBeGreaterThan(3000);
  });

  for (const [fn, impl] of Object.entries(single)) {
    it(`${fn} matches every recorded case`, () => {
      const mine = cases.filter((c) => c.fn === fn);
      expect(mine.length).toBeGreaterThan(10);
      const mismatches = mine
        .map((c) => ({ input: c.input, expected: c.output, actual: impl(c.input as never) ?? null }))
        .filter((m) => JSON.stringify(m.actual) !== JSON.stringify(m.expected));
      expect(mismatches).toEqual([]);
    });
  }

  it("resolveAgentIdFromSessionKey matches values and throws where OpenClaw throws", () => {
    const mismatches = loadParityCases("session-key", "resolveAgentIdFromSessionKey").flatMap((c) => {
      const { key, defaultAgentId } = c.input as { key: string; defaultAgentId: string | null };
      const expected = c.output as { value?: string; error?: string };
      let actual: { value?: string; error?: boolean };
      try {
        actual = { value: resolveAgentIdFromSessionKey(key, defaultAgentId ?? undefined) };
      } catch {
        actual = { error: true };
      }
      const same = expected.error !== undefined ? actual.error === true : actual.value === expected.value;
      return same ? [] : [{ key, defaultAgentId, expected, actual }];
    });
    expect(mismatches).toEqual([]);
  });
});

describe("session keys: properties", () => {
  it("normalizeAgentId is idempotent and yields 1-64 filesystem-safe characters", () => {
    fc.assert(
      fc.property(fc.string(), (raw) => {
        const id = normalizeAgentId(raw);
        // Not always isValidAgentId: OpenClaw keeps a leading "_" ("_" stays "_").
        expect(id).toMatch(/^[a-z0-9_][a-z0-9_-]{0,63}$/);
        expect(normalizeAgentId(id)).toBe(id);
      }),
    );
  });

  it("a built peer key parses back to its agent and reclassifies as an agent key", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.constantFrom("telegram", "slack", "discord"),
        fc.string({ minLength: 1 }).filter((s) => s.trim() !== "" && !s.includes(":")),
        fc.constantFrom("main", "per-peer", "per-channel-peer", "per-account-channel-peer"),
        (agent, channel, peer, dmScope) => {
          const key = buildAgentPeerSessionKey({ agentId: agent, channel, peerId: peer, dmScope });
          expect(classifySessionKeyShape(key)).toBe("agent");
          expect(parseAgentSessionKey(key)?.agentId).toBe(normalizeAgentId(agent));
        },
      ),
    );
  });
});

describe("session keys: kernel builders", () => {
  it("builds cron, cron-run, hook and nested subagent keys", () => {
    const cron = buildCronSessionKey({ agentId: "Ops", jobId: "Morning-Brief" });
    expect(cron).toBe("agent:ops:cron:morning-brief");
    expect(isCronSessionKey(cron)).toBe(true);
    const run = buildCronSessionKey({ agentId: "ops", jobId: "brief", runId: "r1" });
    expect(parseCronRunScopeSuffix(run)).toEqual({ baseSessionKey: "agent:ops:cron:brief", runId: "r1" });
    expect(buildHookSessionKey({ agentId: "main", hookId: "gmail" })).toBe("agent:main:hook:gmail");
    const child = buildSubagentSessionKey({ parentSessionKey: "agent:main:main", subagentId: "a" });
    const grandchild = buildSubagentSessionKey({ parentSessionKey: child, subagentId: "b" });
    expect(getSubagentDepth(grandchild)).toBe(2);
  });

  it("rejects segments that would break the key shape", () => {
    expect(() => buildCronSessionKey({ agentId: "main", jobId: "a:b" })).toThrow(/cron job id "a:b"/);
    expect(() => buildHookSessionKey({ agentId: "main", hookId: " " })).toThrow(/hook id/);
    expect(() => buildSubagentSessionKey({ parentSessionKey: "main", subagentId: "x" })).toThrow(
      /not an agent/,
    );
  });
});
