// `agent-kernel setup`: a config only when there is none, the bootstrap files only when missing, and
// BOOTSTRAP.md only for a brand-new workspace — never again once deleted after its ritual (the seed's rule).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../../test/harness.ts";
import { EXIT } from "../errors.ts";
import { BOOTSTRAP_TEMPLATES } from "./setup.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe("agent-kernel setup", () => {
  it("writes a valid config and every bootstrap file in a new workspace; BOOTSTRAP.md is not recreated", async () => {
    const config = join(h.root, "setup", "config.json5");
    const workspace = join(h.root, "setup", "ws");
    const first = await h.run([
      "setup",
      "--config",
      config,
      "--workspace",
      workspace,
      "--model",
      "openai/gpt-5-mini",
      "--json",
    ]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(EXIT.ok);
    const names = [...Object.keys(BOOTSTRAP_TEMPLATES), "BOOTSTRAP.md"];
    expect(JSON.parse(first.stdout)).toEqual({
      config,
      workspace,
      written: [config, ...names.map((name) => join(workspace, name))],
      kept: [],
      bootstrapSkipped: false,
    });
    expect(readFileSync(config, "utf8")).toContain('model: "openai/gpt-5-mini"');
    // the config it wrote loads: doctor reads it (offline: no probes)
    const doctor = await h.run(["config", "get", "agents.defaults.workspace", "--config", config]);
    expect(doctor.stdout).toBe(`${workspace}\n`);

    // the ritual is done: BOOTSTRAP.md deleted, USER.md edited; a second setup keeps both that way
    rmSync(join(workspace, "BOOTSTRAP.md"));
    writeFileSync(join(workspace, "USER.md"), "# USER.md\n\nName: Ada\n");
    const second = await h.run(["setup", "--config", config, "--json"]);
    expect(second.code).toBe(EXIT.ok);
    expect(JSON.parse(second.stdout).written).toEqual([]);
    expect(existsSync(join(workspace, "BOOTSTRAP.md"))).toBe(false);
    expect(readFileSync(join(workspace, "USER.md"), "utf8")).toBe("# USER.md\n\nName: Ada\n");
  });

  it("a workspace that has bootstrap files is not brand-new: no BOOTSTRAP.md, only the missing files", async () => {
    const workspace = join(h.root, "seeded");
    mkdirSync(workspace);
    writeFileSync(join(workspace, "AGENTS.md"), "mine\n");
    const run = await h.run(["setup", "--workspace", workspace, "--json"]);
    expect(run.code).toBe(EXIT.ok);
    const report = JSON.parse(run.stdout);
    expect(report.kept).toEqual([h.configPath, join(workspace, "AGENTS.md")]);
    expect(existsSync(join(workspace, "BOOTSTRAP.md"))).toBe(false);
    expect(existsSync(join(workspace, "SOUL.md"))).toBe(true);
    expect(readFileSync(join(workspace, "AGENTS.md"), "utf8")).toBe("mine\n");
  });

  it("skipBootstrap writes no bootstrap file", async () => {
    const config = join(h.root, "skip.json5");
    const workspace = join(h.root, "skip-ws");
    writeFileSync(
      config,
      `{ agents: { defaults: { skipBootstrap: true, workspace: ${JSON.stringify(workspace)} } } }`,
    );
    const run = await h.run(["setup", "--config", config, "--json"]);
    expect(JSON.parse(run.stdout)).toMatchObject({ written: [], bootstrapSkipped: true });
    expect(existsSync(join(workspace, "AGENTS.md"))).toBe(false);
  });
});
