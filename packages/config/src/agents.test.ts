import { describe, expect, it } from "vitest";
import { defaultAgentId, listAgentIds, resolveAgentConfig } from "./agents.ts";
import { AGENT_DEFAULTS } from "./defaults.ts";
import { parseConfig } from "./load.ts";

const parse = (input: unknown) => parseConfig(input, { env: {}, cpuCount: 2 });

describe("agents", () => {
  it("has the one agent main when none are listed", () => {
    const config = parse({});
    expect(listAgentIds(config)).toEqual(["main"]);
    expect(defaultAgentId(config)).toBe("main");
    expect(resolveAgentConfig(config, "main")).toMatchObject({
      id: "main",
      isDefault: true,
      timeoutSeconds: 172_800,
    });
  });

  it("picks the agent marked default, else the first", () => {
    expect(defaultAgentId(parse({ agents: { list: [{ id: "a" }, { id: "b", default: true }] } }))).toBe("b");
    expect(defaultAgentId(parse({ agents: { list: [{ id: "a" }, { id: "b" }] } }))).toBe("a");
  });

  it("merges an agent over the defaults: scalars replace, nested sections merge", () => {
    const config = parse({
      agents: {
        defaults: {
          model: { primary: "a/x", fallbacks: ["b/y"] },
          timeoutSeconds: 100,
          blockStreamingChunk: { minChars: 100, maxChars: 500 },
          sandbox: { mode: "non-main" },
        },
        list: [
          {
            id: "ops",
            model: "c/z",
            blockStreamingChunk: { maxChars: 900 },
            sandbox: { workspaceAccess: "ro" },
          },
        ],
      },
    });
    const ops = resolveAgentConfig(config, "OPS");
    expect(ops?.id).toBe("ops");
    expect(ops?.model).toEqual({ primary: "c/z" });
    expect(ops?.timeoutSeconds).toBe(100);
    expect(ops?.blockStreamingChunk).toEqual({ minChars: 100, maxChars: 900, breakPreference: "paragraph" });
    expect(ops?.sandbox).toEqual({ ...AGENT_DEFAULTS.sandbox, mode: "non-main", workspaceAccess: "ro" });
    expect(ops?.isDefault).toBe(true);
  });

  it("returns undefined for an unknown agent", () => {
    expect(resolveAgentConfig(parse({ agents: { list: [{ id: "a" }] } }), "main")).toBeUndefined();
    expect(resolveAgentConfig(parse({}), "ops")).toBeUndefined();
  });
});
