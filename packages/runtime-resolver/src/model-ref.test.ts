import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import { describe, expect, it } from "vitest";
import { loadParityCases } from "../test/parity-fixtures.ts";
import { resolveModelCandidateChain, selectModel } from "./model-chain.ts";
import {
  buildModelAliasIndex,
  modelKey,
  parseModelRef,
  resolveModelRefFromString,
  splitTrailingAuthProfile,
} from "./model-ref.ts";

const rawConfigs = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "fixtures", "openclaw", "model-configs.json"), "utf8"),
) as unknown[];
const configs: KernelConfig[] = rawConfigs.map((raw) => parseConfig(raw, { env: {}, cpuCount: 1 }));
const configAt = (index: number): KernelConfig => {
  const config = configs[index];
  if (!config) throw new Error(`no fixture config ${index}`);
  return config;
};
const mismatchesOf = <T>(rows: T[], same: (row: T) => boolean) => rows.filter((row) => !same(row));

describe("model refs: parity with OpenClaw 2026.9.6", () => {
  it("parseModelRef matches every recorded ref", () => {
    const cases = loadParityCases("model-ref", "parseModelRef");
    expect(cases.length).toBeGreaterThan(400);
    const bad = mismatchesOf(cases, (c) => {
      const { raw, defaultProvider } = c.input as { raw: string; defaultProvider: string };
      return JSON.stringify(parseModelRef(raw, defaultProvider)) === JSON.stringify(c.output);
    });
    expect(bad).toEqual([]);
  });

  it("splitTrailingAuthProfile and modelKey match every recorded case", () => {
    const split = loadParityCases("model-ref", "splitTrailingAuthProfile");
    expect(
      mismatchesOf(
        split,
        (c) => JSON.stringify(splitTrailingAuthProfile(c.input as string)) === JSON.stringify(c.output),
      ),
    ).toEqual([]);
    const keys = loadParityCases("model-ref", "modelKey");
    expect(
      mismatchesOf(keys, (c) => {
        const { provider, model } = c.input as { provider: string; model: string };
        return modelKey(provider, model) === c.output;
      }),
    ).toEqual([]);
  });

  it("resolveModelRefFromString (aliases, custom providers) matches every recorded case", () => {
    const cases = loadParityCases("model-ref", "resolveModelRefFromString");
    expect(cases.length).toBeGreaterThan(300);
    const bad = mismatchesOf(cases, (c) => {
      const { configIndex, agentId, defaultProvider, raw } = c.input as {
        configIndex: number;
        agentId: string | null;
        defaultProvider: string;
        raw: string;
      };
      const config = configAt(configIndex);
      const aliasIndex = buildModelAliasIndex(config, { agentId: agentId ?? undefined, defaultProvider });
      const resolved = resolveModelRefFromString({ config, raw, defaultProvider, aliasIndex });
      const comparable =
        resolved === null
          ? null
          : { ref: resolved.ref, ...(resolved.alias ? { alias: resolved.alias } : {}) };
      return JSON.stringify(comparable) === JSON.stringify(c.output);
    });
    expect(bad).toEqual([]);
  });

  it("resolveModelCandidateChain matches every recorded chain", () => {
    const cases = loadParityCases("model-ref", "resolveModelCandidateChain");
    expect(cases.length).toBeGreaterThan(500);
    const bad = mismatchesOf(cases, (c) => {
      const input = c.input as {
        configIndex: number;
        agentId?: string;
        provider?: string;
        model?: string;
        fallbacksOverride?: string[];
      };
      const chain = resolveModelCandidateChain({ ...input, config: configAt(input.configIndex) }).map(
        (x) => ({
          provider: x.provider,
          model: x.model,
          routeOrigin: x.origin,
        }),
      );
      return JSON.stringify({ value: chain }) === JSON.stringify(c.output);
    });
    expect(bad).toEqual([]);
  });
});

describe("model selection", () => {
  const config = configAt(0);

  it("a user session override is strict and a non-allowlisted one is dropped with a note", () => {
    const user = selectModel({ config, agentId: "main", sessionOverride: { model: "mini", source: "user" } });
    expect(user).toMatchObject({
      ref: { provider: "openai", model: "gpt-5-mini" },
      source: "session-override:user",
    });
    expect(user.fallbacksOverride).toEqual([]);
    const dropped = selectModel({
      config,
      agentId: "main",
      sessionOverride: { model: "openai/gpt-4o", source: "user" },
    });
    expect(dropped.source).toBe("defaults");
    expect(dropped.notes[0]).toMatch(/not allowlisted/);
  });

  it("an agent primary is strict unless the agent lists fallbacks; @profile is kept", () => {
    expect(selectModel({ config, agentId: "research" })).toMatchObject({
      source: "agent",
      fallbacksOverride: [],
    });
    expect(selectModel({ config, agentId: "writer" }).fallbacksOverride).toBeUndefined();
    const request = selectModel({ config, agentId: "main", requested: "sonnet@anthropic:work" });
    expect(request).toMatchObject({ source: "request", authProfile: "anthropic:work" });
  });

  it("rejects a requested model outside the allowlist with the allowed keys", () => {
    expect(() => selectModel({ config, agentId: "main", requested: "openai/gpt-4o" })).toThrow(
      /"openai\/gpt-4o" is not allowed for agent "main" \(allowed: anthropic\/claude-sonnet-4-5/,
    );
  });
});
