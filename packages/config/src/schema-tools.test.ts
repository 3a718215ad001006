// The tool keys of issue 23: `tools.web.fetch` and `tools.exec.applyPatch`, their defaults and what a user
// reads for a bad value.
import { describe, expect, it } from "vitest";
import { TOOLS_DEFAULTS } from "./defaults.ts";
import { parseConfig, safeParseConfig } from "./load.ts";

const parse = (input: unknown) => parseConfig(input, { env: {}, cpuCount: 2 });

function problems(input: unknown): string[] {
  const result = safeParseConfig(input, { env: {}, sourceName: "test.json5" });
  if (result.ok) throw new Error("expected the config to be invalid");
  return result.error.message
    .split("\n")
    .slice(1)
    .map((line) => line.replace(/^ {2}- /, ""));
}

describe("tools.web.fetch", () => {
  it("is absent unless written, and filled with OpenClaw's defaults when it is", () => {
    expect(parse({}).tools.web).toBeUndefined();
    expect(parse({ tools: { web: { fetch: {} } } }).tools.web?.fetch).toEqual({
      enabled: true,
      maxChars: 20_000,
      maxCharsCap: 20_000,
      maxResponseBytes: 750_000,
      timeoutSeconds: 30,
      maxRedirects: 3,
    });
    expect(TOOLS_DEFAULTS.webFetch.maxResponseBytes).toBe(750_000);
  });

  it("keeps the SSRF policy as written", () => {
    const fetch = parse({
      tools: {
        web: {
          fetch: {
            enabled: false,
            ssrfPolicy: { allowedHostnames: ["intranet.example"], blockedHostnames: ["*.ads.example"] },
          },
        },
      },
    }).tools.web?.fetch;
    expect(fetch?.enabled).toBe(false);
    expect(fetch?.ssrfPolicy).toEqual({
      allowedHostnames: ["intranet.example"],
      blockedHostnames: ["*.ads.example"],
    });
  });

  it("refuses a response cap outside 32000-10000000 and unknown policy keys", () => {
    expect(problems({ tools: { web: { fetch: { maxResponseBytes: 1000 } } } })[0]).toMatch(
      /^tools\.web\.fetch\.maxResponseBytes: /,
    );
    expect(problems({ tools: { web: { fetch: { ssrfPolicy: { allowPrivate: true } } } } })[0]).toMatch(
      /^tools\.web\.fetch\.ssrfPolicy\.allowPrivate: unknown key/,
    );
  });
});

describe("tools.exec.applyPatch", () => {
  it("defaults to enabled for every model, inside the workspace", () => {
    expect(parse({ tools: { exec: { applyPatch: {} } } }).tools.exec?.applyPatch).toEqual({
      enabled: true,
      workspaceOnly: true,
    });
    expect(
      parse({ tools: { exec: { applyPatch: { enabled: false, allowModels: ["gpt-5.4"] } } } }).tools.exec
        ?.applyPatch,
    ).toMatchObject({ enabled: false, allowModels: ["gpt-5.4"] });
  });

  it("refuses workspaceOnly false (writing outside the workspace is not supported)", () => {
    expect(problems({ tools: { exec: { applyPatch: { workspaceOnly: false } } } })[0]).toMatch(
      /^tools\.exec\.applyPatch\.workspaceOnly: /,
    );
  });
});

describe("tools.exec background keys", () => {
  it("keeps them as written, unset by default (the registry's own defaults apply)", () => {
    expect(parse({}).tools.exec).toBeUndefined();
    expect(
      parse({
        tools: {
          exec: {
            backgroundMs: 10_000,
            cleanupMs: 1_800_000,
            maxBackgroundProcesses: 4,
            backgroundMaxOutputChars: 50_000,
          },
        },
      }).tools.exec,
    ).toEqual({
      backgroundMs: 10_000,
      cleanupMs: 1_800_000,
      maxBackgroundProcesses: 4,
      backgroundMaxOutputChars: 50_000,
    });
  });

  it("refuses values outside OpenClaw's bounds", () => {
    expect(problems({ tools: { exec: { backgroundMs: 5 } } })[0]).toMatch(/^tools\.exec\.backgroundMs: /);
    expect(problems({ tools: { exec: { cleanupMs: 1000 } } })[0]).toMatch(/^tools\.exec\.cleanupMs: /);
    expect(problems({ tools: { exec: { maxBackgroundProcesses: 0 } } })[0]).toMatch(
      /^tools\.exec\.maxBackgroundProcesses: /,
    );
  });
});
