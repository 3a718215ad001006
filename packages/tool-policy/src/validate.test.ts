import { formatPath, parseConfig } from "@agent-kernel/config";
import { describe, expect, it } from "vitest";
import { extendToolCatalog } from "./catalog.ts";
import { validateToolPolicyConfig } from "./validate.ts";

const lines = (issues: ReturnType<typeof validateToolPolicyConfig>) =>
  issues.map((issue) => `${issue.severity} ${formatPath(issue.path)}: ${issue.message}`);

describe("validateToolPolicyConfig", () => {
  it("accepts a clean config", () => {
    const config = parseConfig(
      { tools: { profile: "coding", deny: ["group:web", "bash", "sessions_*"], alsoAllow: ["browser"] } },
      { env: {} },
    );
    expect(validateToolPolicyConfig(config)).toEqual([]);
  });

  it("reports an unknown group as an error with the config path and a suggestion", () => {
    const config = parseConfig(
      {
        agents: {
          list: [{ id: "main" }, { id: "work", tools: { byProvider: { openai: { deny: ["group:fss"] } } } }],
        },
        channels: { telegram: { groups: { "-1": { tools: { allow: ["group:zzzzzz"] } } } } },
      },
      { env: {} },
    );
    const issues = validateToolPolicyConfig(config);
    expect(issues[0]).toMatchObject({
      severity: "error",
      path: ["agents", "list", 1, "tools", "byProvider", "openai", "deny", 0],
    });
    expect(lines(issues)).toEqual([
      'error agents.list[1].tools.byProvider.openai.deny[0]: unknown tool group "group:fss"; did you mean "group:fs"?',
      expect.stringMatching(
        /^error channels\.telegram\.groups\["-1"\]\.tools\.allow\[0\]: unknown tool group "group:zzzzzz" \(known groups: group:openclaw, group:fs, /,
      ),
      expect.stringMatching(
        /^warning channels\.telegram\.groups\["-1"\]\.tools\.allow: allowlist names no known tool/,
      ),
    ]);
  });

  it("warns about entries that match no known tool, with did-you-mean", () => {
    const config = parseConfig(
      { tools: { deny: ["web_serch", "nothing_*"], sandbox: { tools: { alsoAllow: ["my_plugin"] } } } },
      { env: {} },
    );
    expect(lines(validateToolPolicyConfig(config))).toEqual([
      'warning tools.deny[0]: tool "web_serch" matches no known tool; it only takes effect if a plugin or custom tool has that name; did you mean "web_search"?',
      'warning tools.deny[1]: pattern "nothing_*" matches no known tool; it only takes effect if a plugin or custom tool has that name',
      'warning tools.sandbox.tools.alsoAllow[0]: tool "my_plugin" matches no known tool; it only takes effect if a plugin or custom tool has that name',
    ]);
  });

  it("warns when an allowlist names only plugin tools, and knows them once the catalog does", () => {
    const config = parseConfig({ tools: { allow: ["lobster_run"] } }, { env: {} });
    expect(lines(validateToolPolicyConfig(config))).toContain(
      "warning tools.allow: allowlist names no known tool, so tools blocks every core tool; to add plugin tools without removing core ones, use alsoAllow",
    );
    expect(validateToolPolicyConfig(config, extendToolCatalog({ tools: ["lobster_run"] }))).toEqual([]);
  });

  it("reports an unknown profile (a config built in code, past the schema)", () => {
    const config = parseConfig({}, { env: {} });
    const unchecked = { ...config, tools: { ...config.tools, profile: "codng" } } as unknown as typeof config;
    expect(lines(validateToolPolicyConfig(unchecked))).toEqual([
      'error tools.profile: unknown tool profile "codng"; did you mean "coding"?',
    ]);
  });
});
