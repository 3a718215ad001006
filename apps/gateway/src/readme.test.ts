// The README's commands, run exactly as written (the `agent-kernel-gateway` bin is dist/bin.js) in a scratch
// directory holding `config.json5`: the daemon starts and prints its web chat link, `status` sees it, SIGINT
// stops it with 130, `logs --json` reads the records it wrote, and `status` then exits 1.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { APP_DIR, buildGateway, GATEWAY_BIN } from "../test/build.ts";

beforeAll(() => buildGateway(), 300_000);

const BIN = GATEWAY_BIN;

/** The README's `sh` block, each line split into the bin and its arguments. */
function readmeCommands(): string[][] {
  const readme = readFileSync(join(APP_DIR, "README.md"), "utf8");
  const usage = readme.slice(readme.indexOf("## Usage"));
  const block = /```sh\n([\s\S]*?)```/.exec(usage)?.[1] ?? "";
  return block
    .trim()
    .split("\n")
    .map((line) => line.split(/\s+/));
}

function start(args: readonly string[], cwd: string) {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" };
  for (const name of ["AGENT_KERNEL_CONFIG", "AGENT_KERNEL_STATE_DIR", "NODE_OPTIONS"]) delete env[name];
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

describe("the README's commands", () => {
  it("run as written: gateway, status, logs", async ({ onTestFinished }) => {
    const commands = readmeCommands();
    expect(commands.map((command) => command.slice(0, 2))).toEqual([
      ["agent-kernel-gateway", "--config"],
      ["agent-kernel-gateway", "status"],
      ["agent-kernel-gateway", "logs"],
    ]);
    const [gatewayArgs, statusArgs, logsArgs] = commands.map((command) => command.slice(1));
    const dir = mkdtempSync(join(tmpdir(), "gateway-readme-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "config.json5"), '{ channels: { webchat: { port: 0, token: "readme" } } }');

    const daemon = start(gatewayArgs ?? [], dir);
    onTestFinished(() => void daemon.child.kill("SIGKILL"));
    while (!daemon.stderr().includes("gateway running")) {
      if (daemon.child.exitCode !== null) throw new Error(`exited early: ${daemon.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(daemon.stderr()).toMatch(/web chat: http:\/\/127\.0\.0\.1:\d+\/#token=readme/);

    const running = start(statusArgs ?? [], dir);
    expect(await running.exited).toBe(0);
    expect(running.stdout()).toMatch(/^gateway: running \(pid \d+/);
    expect(running.stdout()).toContain("follow-up queue: 0 pending, 0 claimed");

    daemon.child.kill("SIGINT");
    expect(await daemon.exited).toBe(130);

    const logs = start(logsArgs ?? [], dir);
    expect(await logs.exited).toBe(0);
    const events = logs
      .stdout()
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { event?: string }).event);
    expect(events).toContain("ready");
    expect(events.at(-1)).toBe("stopped");

    const stopped = start(statusArgs ?? [], dir);
    expect(await stopped.exited).toBe(1);
    expect(stopped.stdout()).toMatch(/^gateway: not running on /);
  }, 120_000);
});
