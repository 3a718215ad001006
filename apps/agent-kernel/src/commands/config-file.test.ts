// `agent-kernel config get|set`: paths with brackets, values read as JSON5 or text, the whole config checked
// before a write (an invalid value leaves the file as it was), secrets redacted on get, and comments: lost on
// a rewrite, which the command says, keeping the file before the change as <file>.bak.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import JSON5 from "json5";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../../test/harness.ts";
import { EXIT } from "../errors.ts";
import { hasComments, parseConfigPath } from "./config-file.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe("agent-kernel config", () => {
  it("parses paths and finds comments outside strings only", () => {
    expect(parseConfigPath('agents.defaults.models["openai/gpt-4.1"].alias')).toEqual([
      "agents",
      "defaults",
      "models",
      "openai/gpt-4.1",
      "alias",
    ]);
    expect(parseConfigPath("agents.list[1].id")).toEqual(["agents", "list", 1, "id"]);
    expect(() => parseConfigPath("agents..list")).toThrow(/not a config path/);
    expect(hasComments('{ url: "http://x//y" }')).toBe(false);
    expect(hasComments("{ a: 1 } // note")).toBe(true);
    expect(hasComments("{ /* note */ a: 1 }")).toBe(true);
  });

  it("get reads a value of the loaded config (defaults filled), secrets redacted", async () => {
    const model = await h.run(["config", "get", "agents.defaults.model", "--json"]);
    expect(JSON.parse(model.stdout)).toEqual({ primary: "scripted/m1" });
    expect((await h.run(["config", "get", "session.dmScope"])).stdout).toBe("main\n");
    expect((await h.run(["config", "get", 'agents.defaults.models["scripted/m2"].alias'])).stdout).toBe(
      "sonnet\n",
    );
    const missing = await h.run(["config", "get", "agents.nothing"]);
    expect(missing.code).toBe(EXIT.notFound);
  });

  it("set writes a checked value; an invalid one is refused and the file kept; comments are reported lost", async () => {
    const original = readFileSync(h.configPath, "utf8");
    writeFileSync(h.configPath, `// my notes\n${original}`);
    const set = await h.run(["config", "set", "session.dmScope", "per-peer"]);
    expect(set.code).toBe(EXIT.ok);
    expect(set.stdout).toBe(`session.dmScope = "per-peer" (${h.configPath})\n`);
    expect(set.stderr).toContain("the comments in");
    expect(readFileSync(`${h.configPath}.bak`, "utf8")).toBe(`// my notes\n${original}`);
    const written = JSON5.parse(readFileSync(h.configPath, "utf8"));
    expect(written.session).toEqual({ dmScope: "per-peer" });
    expect(written.agents.defaults.model).toBe("scripted/m1");

    const number = await h.run(["config", "set", "agents.defaults.timeoutSeconds", "120"]);
    expect(number.code).toBe(EXIT.ok);
    expect(number.stderr).toBe(""); // no comments left to lose
    expect(JSON5.parse(readFileSync(h.configPath, "utf8")).agents.defaults.timeoutSeconds).toBe(120);

    const before = readFileSync(h.configPath, "utf8");
    const bad = await h.run(["config", "set", "session.dmScope", "everyone"]);
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toContain("session.dmScope: expected one of");
    expect(readFileSync(h.configPath, "utf8")).toBe(before);
  });

  it("set creates the file when there is none", async () => {
    const fresh = `${h.root}/fresh/config.json5`;
    const set = await h.run([
      "config",
      "set",
      "agents.defaults.model",
      "openai/gpt-5-mini",
      "--config",
      fresh,
    ]);
    expect(set.code).toBe(EXIT.ok);
    expect(existsSync(fresh)).toBe(true);
    expect(JSON5.parse(readFileSync(fresh, "utf8"))).toEqual({
      agents: { defaults: { model: "openai/gpt-5-mini" } },
    });
  });
});
