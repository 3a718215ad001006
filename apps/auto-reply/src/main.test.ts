// The `auto-reply` binary as a subprocess (from source): a bad flag or config exits 2 with one paragraph;
// with a web chat channel it starts listening and prints the page link with its token, SIGTERM shuts it down
// cleanly (exit 143); a port in use is one clear line and exit 3, not a stack trace.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";

const MAIN = join(import.meta.dirname, "main.ts");

function start(args: readonly string[]) {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.AGENT_KERNEL_CONFIG;
  delete env.AGENT_KERNEL_STATE_DIR;
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ["--conditions=@agent-kernel/source", MAIN, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

function scratch(onTestFinished: (fn: OnTestFinishedHandler) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "auto-reply-main-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe.concurrent("auto-reply (the binary)", () => {
  it("exits 2 with one paragraph on an unknown flag or an invalid config", async ({ onTestFinished }) => {
    const dir = scratch(onTestFinished);
    const flag = start(["--nope"]);
    expect(await flag.exited).toBe(2);
    expect(flag.stderr()).toMatch(/^auto-reply: .*--nope/);
    const bad = join(dir, "bad.json5");
    writeFileSync(bad, "{ channels: { webchat: { port: -1 } } }");
    const config = start(["--config", bad, "--state-dir", join(dir, "state")]);
    expect(await config.exited).toBe(2);
    expect(config.stderr()).toMatch(/^auto-reply: .*channels\.webchat\.port/s);
    expect(config.stderr()).not.toMatch(/\n\s+at \S/);
  });

  it("exits 2 when no channel is configured", async ({ onTestFinished }) => {
    const dir = scratch(onTestFinished);
    const file = join(dir, "empty.json5");
    writeFileSync(file, "{}");
    const run = start(["--config", file, "--state-dir", join(dir, "state")]);
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toContain("no channel is configured");
  });

  it("a web chat port in use is one clear line and exit 3", async ({ onTestFinished }) => {
    const dir = scratch(onTestFinished);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => void taken.close());
    const port = (taken.address() as { port: number }).port;
    const file = join(dir, "config.json5");
    writeFileSync(file, `{ channels: { webchat: { port: ${port}, token: "t0ken" } } }`);
    const run = start(["--config", file, "--state-dir", join(dir, "state")]);
    expect(await run.exited).toBe(3);
    expect(run.stderr()).toBe(
      `auto-reply: cannot listen on 127.0.0.1:${port}: the port is already in use (another gateway running? change channels.<id>.port)\n`,
    );
  });

  it("starts the web chat channel, prints its link with the token, and stops cleanly on SIGTERM", async ({
    onTestFinished,
  }) => {
    const dir = scratch(onTestFinished);
    const file = join(dir, "config.json5");
    writeFileSync(file, '{ channels: { webchat: { port: 0, token: "t0ken" } } }');
    const run = start(["--config", file, "--state-dir", join(dir, "state")]);
    onTestFinished(() => {
      run.child.kill("SIGKILL");
    });
    while (!run.stderr().includes("listening on")) {
      if (run.child.exitCode !== null) throw new Error(`exited early: ${run.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(run.stderr()).toContain("listening on webchat:default");
    while (!run.stderr().includes("#token=")) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(run.stderr()).toMatch(/\[auto-reply\] web chat: http:\/\/127\.0\.0\.1:\d+\/#token=t0ken\n/);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(143);
    expect(run.stderr()).toContain("shutting down");
  });
});
