// Cache-TTL pruning against OpenClaw 2026.9.6's own answers on the same inputs (recorded by
// tooling/parity/record/context-pruning.mjs): the settings a config resolves to, and what each history is
// sent as on a first request (past or within the TTL) and on a second one right after (earlier trims
// replayed, nothing new trimmed).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  type ContextPruningConfig,
  createPruningRecord,
  parseTtlMs,
  pruneExpiredToolResults,
  resolveCacheTtlPruningSettings,
} from "./context-pruning.ts";

type Message = { role: string; [key: string]: unknown };
interface Run {
  readonly sent: (Message | "=")[];
  readonly pruned: boolean;
}
interface Fixture {
  readonly now: number;
  readonly settings: readonly {
    readonly config: ContextPruningConfig;
    readonly settings: {
      readonly ttlMs: number;
      readonly hardClear: boolean;
      readonly placeholder: string;
      readonly prunable: Readonly<Record<string, boolean>>;
    } | null;
  }[];
  readonly cases: readonly {
    readonly name: string;
    readonly messages: Message[];
    readonly contextWindowTokens: number;
    readonly lastTouchAgoMs: number | null;
    readonly config?: ContextPruningConfig;
    readonly first: Run;
    readonly second: Run;
  }[];
}

const fixture = JSON.parse(
  readFileSync(new URL("../../fixtures/openclaw/context-pruning/cache-ttl.json", import.meta.url), "utf8"),
) as Fixture;

describe("cache-TTL settings match OpenClaw 2026.9.6", () => {
  it.each(fixture.settings.map((entry) => [JSON.stringify(entry.config), entry] as const))(
    "%s",
    (_name, entry) => {
      const settings = resolveCacheTtlPruningSettings(entry.config);
      if (entry.settings === null) {
        expect(settings).toBeUndefined();
        return;
      }
      expect(settings).toBeDefined();
      expect({
        ttlMs: settings?.ttlMs,
        hardClear: settings?.hardClear,
        placeholder: settings?.placeholder,
      }).toEqual({
        ttlMs: entry.settings.ttlMs,
        hardClear: entry.settings.hardClear,
        placeholder: entry.settings.placeholder,
      });
      for (const [name, prunable] of Object.entries(entry.settings.prunable))
        expect([name, settings?.isToolPrunable(name)]).toEqual([name, prunable]);
    },
  );

  it("parses durations in OpenClaw's units, minutes by default", () => {
    expect(parseTtlMs("5m")).toBe(300_000);
    expect(parseTtlMs("10")).toBe(600_000);
    expect(parseTtlMs("1.5h")).toBe(5_400_000);
    expect(parseTtlMs("250ms")).toBe(250);
    expect(parseTtlMs("soon")).toBeUndefined();
  });
});

describe("pruneExpiredToolResults matches OpenClaw 2026.9.6", () => {
  it.each(fixture.cases.map((entry) => [entry.name, entry] as const))("%s", (_name, entry) => {
    const settings = resolveCacheTtlPruningSettings(entry.config ?? { mode: "cache-ttl" });
    if (settings === undefined) throw new Error("the fixture's config must enable pruning");
    const record = createPruningRecord();
    const run = (lastTouchAgoMs: number | null) => {
      let pruned = false;
      const input = structuredClone(entry.messages);
      const sent = pruneExpiredToolResults(
        {
          messages: input,
          settings,
          contextWindowTokens: entry.contextWindowTokens,
          lastCacheTouchAt: lastTouchAgoMs === null ? null : fixture.now - lastTouchAgoMs,
          now: fixture.now,
          record,
        },
        () => {
          pruned = true;
        },
      );
      expect(input).toEqual(entry.messages);
      return { sent: JSON.parse(JSON.stringify(sent)) as Message[], pruned };
    };
    const expand = (expected: Run) =>
      expected.sent.map((message, index) => (message === "=" ? entry.messages[index] : message));
    const first = run(entry.lastTouchAgoMs);
    expect(first.sent).toEqual(expand(entry.first));
    expect(first.pruned).toBe(entry.first.pruned);
    const second = run(1_000);
    expect(second.sent).toEqual(expand(entry.second));
    expect(second.pruned).toBe(entry.second.pruned);
  });

  it("returns the very input array when nothing is trimmed", () => {
    const settings = resolveCacheTtlPruningSettings({ mode: "cache-ttl" });
    if (settings === undefined) throw new Error("pruning must be on");
    const messages = [{ role: "user", content: "hi", timestamp: 1 }];
    const input = {
      messages,
      settings,
      contextWindowTokens: 1000,
      lastCacheTouchAt: 0,
      now: 10 ** 9,
      record: createPruningRecord(),
    };
    expect(pruneExpiredToolResults(input)).toBe(messages);
  });
});
