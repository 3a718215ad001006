// The `agent-cron` binary as a long-running process: `start` stays up and runs an `every 5s` job on its
// schedule (the real clock's timers hold the process), and Ctrl-C stops it with 130; `run` honours Ctrl-C by
// aborting the turn (stored as aborted) and exiting 130, SIGTERM with 143. Real subprocesses against
// tooling/fake-llm; no fixed ports, generous waits.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { type CronHarness, createCronHarness } from "../test/harness.ts";

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void): Promise<CronHarness> {
  const h = await createCronHarness();
  onTestFinished(() => h.close());
  return h;
}

interface Running {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output(): string;
}

function spawnBinary(args: readonly string[]): Running {
  const appDir = join(import.meta.dirname, "..");
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of ["AGENT_KERNEL_CONFIG", "AGENT_KERNEL_STATE_DIR", "NODE_OPTIONS"]) delete env[name];
  const child = spawn(
    process.execPath,
    ["--conditions=@agent-kernel/source", join(appDir, "src", "main.ts"), ...args],
    { cwd: appDir, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.concurrent("agent-cron signals", () => {
  it("start stays up, runs an every-5s job on schedule, and Ctrl-C exits 130", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.writeConfig(
      `{ jobs: [{ id: "tick5", schedule: { kind: "every", everySeconds: 5 }, payload: { message: "beat" } }] }`,
    );
    for (let i = 0; i < 10; i++) h.llm.enqueue(reply(`beat ${i}`));
    const running = spawnBinary(["start", "--config", h.configPath, "--state-dir", h.stateDir]);
    onTestFinished(() => void running.child.kill("SIGKILL"));
    await until("two scheduled runs", () => h.llm.requests.length >= 2, 90_000);
    expect(running.child.exitCode).toBeNull();
    expect(running.output()).toContain("tick5: ok run");
    running.child.kill("SIGINT");
    expect(await running.exited).toBe(130);
  }, 120_000);

  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`run aborts the turn on ${signal} and exits ${code}`, async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      h.writeConfig(
        `{ jobs: [{ id: "slow", schedule: { kind: "every", everySeconds: 3600 }, payload: { message: "wait" } }] }`,
      );
      h.llm.enqueue({ type: "stall" });
      const common = ["--config", h.configPath, "--state-dir", h.stateDir];
      const running = spawnBinary(["run", "slow", ...common]);
      onTestFinished(() => void running.child.kill("SIGKILL"));
      await until("the model call", () => h.llm.requests.length >= 1);
      running.child.kill(signal);
      expect(await running.exited).toBe(code);
      expect(running.output()).toContain("slow: aborted");
      const history = spawnBinary(["history", "slow", "--json", ...common]);
      expect(await history.exited).toBe(0);
      expect(JSON.parse(history.output())).toEqual([expect.objectContaining({ status: "aborted" })]);
    }, 120_000);
  }
});
