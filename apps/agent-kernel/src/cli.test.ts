// The umbrella's own surface and its dispatch: --version, --help with an example for every subcommand, "did
// you mean", and each app reached through `agent-kernel <app> …` — in-process for the apps that export their
// command line, as the app's own binary for the others — against tooling/fake-llm, real SQLite and pi.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_DIR, createHarness, type Harness } from "../test/harness.ts";
import { SUBCOMMANDS } from "./cli.ts";
import { EXIT } from "./errors.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe("agent-kernel", () => {
  it("--version prints the package's version", async () => {
    const version = JSON.parse(readFileSync(join(APP_DIR, "package.json"), "utf8")).version;
    expect(await h.run(["--version"])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("--help lists every subcommand with at least one example of it, and no colour off a terminal", async () => {
    const help = await h.run(["--help"]);
    expect(help.code).toBe(EXIT.ok);
    expect(help.stdout).not.toContain("\u001b[");
    for (const [name, command] of Object.entries(SUBCOMMANDS)) {
      expect(help.stdout).toContain(`  ${name}`);
      expect(command.examples.length).toBeGreaterThan(0);
      for (const example of command.examples) {
        expect(example.startsWith(`agent-kernel ${name}`)).toBe(true);
        expect(help.stdout).toContain(example);
      }
    }
  });

  it("every own operation's --help has examples and exits 0", async () => {
    for (const name of ["pairing", "cron", "channels", "models", "sessions", "doctor", "config", "setup"]) {
      const help = await h.run([name, "--help"]);
      expect(help.code, name).toBe(EXIT.ok);
      expect(help.stdout, name).toMatch(/Examples:\n {2}agent-kernel /);
    }
  });

  it("no command is a usage error; a mistyped one says what was meant", async () => {
    const none = await h.run([]);
    expect(none.code).toBe(EXIT.usage);
    expect(none.stderr).toContain("Usage: agent-kernel");
    const typo = await h.run(["pairng", "list"]);
    expect(typo.code).toBe(EXIT.usage);
    expect(typo.stderr).toBe(
      'agent-kernel: unknown command "pairng"; did you mean "pairing"? Run `agent-kernel --help` for the commands.\n',
    );
  });

  it("agent -m runs a turn through the agent app (in-process), and sessions list reads it back", async () => {
    h.llm.enqueue(reply("hello from the umbrella"));
    const turn = await h.run(["agent", "-m", "hi", "--json"]);
    expect(turn.stderr).toBe("");
    expect(turn.code).toBe(EXIT.ok);
    expect(JSON.parse(turn.stdout).result.assistantText).toBe("hello from the umbrella");
    const sessions = await h.run(["sessions", "list", "--json"]);
    expect(sessions.code).toBe(EXIT.ok);
    expect(JSON.parse(sessions.stdout).map((s: { sessionKey: string }) => s.sessionKey)).toContain(
      "agent:main:main",
    );
  }, 120_000);

  it("cron list reaches the cron app and followup list the followup app; their exit codes pass through", async () => {
    const cron = await h.run(["cron", "list", "--json"]);
    expect(cron.stderr).toBe("");
    expect(cron.code).toBe(EXIT.ok);
    expect(JSON.parse(cron.stdout).map((job: { id: string }) => job.id)).toEqual(["digest"]);
    const missing = await h.run(["cron", "history", "nope"]);
    expect(missing.code).toBe(EXIT.notFound);
    const followup = await h.run(["followup", "list", "--json"]);
    expect(followup.code).toBe(EXIT.ok);
    expect(JSON.parse(followup.stdout)).toEqual([]);
  }, 120_000);

  it("hybrid-planner and auto-reply answer --help through the umbrella", async () => {
    const planner = await h.run(["hybrid-planner", "--help"]);
    expect(planner.code).toBe(EXIT.ok);
    expect(planner.stdout).toContain("Usage: hybrid-planner");
    const autoReply = await h.run(["auto-reply", "--help"]);
    expect(autoReply.code).toBe(EXIT.ok);
    expect(autoReply.stdout).toContain("Usage: auto-reply");
  }, 120_000);

  it("gateway, status and logs reach the gateway app: no daemon runs on this state dir", async () => {
    const help = await h.run(["gateway", "--help"]);
    expect(help.code).toBe(EXIT.ok);
    expect(help.stdout).toContain("Usage: agent-kernel gateway");
    const status = await h.run(["status"]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(`gateway: not running on ${h.stateDir}`);
    const logs = await h.run(["logs"]);
    expect(logs.code).toBe(1);
    expect(logs.stderr).toContain("no gateway logs yet");
  }, 120_000);

  it("as a process: the exit code and streams are the command's", async () => {
    const bad = await h.spawn(["agent", "--bogus"]);
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/^agent: unknown option '--bogus'/);
    const version = await h.spawn(["--version"]);
    expect(version.code).toBe(EXIT.ok);
  }, 120_000);
});
