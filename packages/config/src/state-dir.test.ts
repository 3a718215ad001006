import { describe, expect, it } from "vitest";
import { parseConfig } from "./load.ts";
import { applyStateDir, resolveStateDir } from "./state-dir.ts";

const home = "/home/someone";
const cwd = "/srv/app";
const withStateDir = (stateDir?: string) => {
  const config = parseConfig({});
  return stateDir === undefined ? config : { ...config, store: { ...config.store, stateDir } };
};

describe("applyStateDir (a program's rule)", () => {
  const env = { AGENT_KERNEL_STATE_DIR: "/from/env" };
  it("prefers the flag, then the variable, then the config, then ~/.agent-kernel", () => {
    const config = withStateDir("/from/config");
    expect(applyStateDir(config, "/from/flag", { env, cwd, homeDir: home }).stateDir).toBe("/from/flag");
    expect(applyStateDir(config, undefined, { env, cwd, homeDir: home }).stateDir).toBe("/from/env");
    expect(applyStateDir(config, "  ", { env: {}, cwd, homeDir: home }).stateDir).toBe("/from/config");
    expect(
      applyStateDir(withStateDir(), undefined, { env: { AGENT_KERNEL_STATE_DIR: " " }, homeDir: home })
        .stateDir,
    ).toBe("/home/someone/.agent-kernel");
  });
  it("expands ~ and resolves a relative dir against cwd", () => {
    expect(applyStateDir(withStateDir(), "~/state", { env: {}, homeDir: home }).stateDir).toBe(
      "/home/someone/state",
    );
    expect(applyStateDir(withStateDir(), "~", { env: {}, homeDir: home }).stateDir).toBe(home);
    expect(applyStateDir(withStateDir("state"), undefined, { env: {}, cwd }).stateDir).toBe("/srv/app/state");
  });
  it("writes the chosen dir into the config it returns, absolute", () => {
    const { config, stateDir } = applyStateDir(withStateDir("/from/config"), "rel", { env: {}, cwd });
    expect(stateDir).toBe("/srv/app/rel");
    expect(config.store.stateDir).toBe("/srv/app/rel");
  });
});

describe("resolveStateDir (a library's rule)", () => {
  it("prefers the config a program resolved over the variable", () => {
    const env = { AGENT_KERNEL_STATE_DIR: "/from/env" };
    expect(resolveStateDir(withStateDir("/from/config"), { env })).toBe("/from/config");
    expect(resolveStateDir(withStateDir(), { env })).toBe("/from/env");
    expect(resolveStateDir(undefined, { env: {}, homeDir: home })).toBe("/home/someone/.agent-kernel");
  });
});
