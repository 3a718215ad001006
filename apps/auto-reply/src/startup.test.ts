// Start-up of the `auto-reply` binary against the real fakes: a retryable Telegram error (5xx on getMe,
// beyond the adapter's own retries) is retried with backoff and the daemon comes up; a token Telegram refuses
// and Slack's invalid_auth are each one clear line and exit 3 — no stack trace.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeSlack } from "@agent-kernel/fake-slack";
import { startFakeTelegram } from "@agent-kernel/fake-telegram";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";

const MAIN = join(import.meta.dirname, "main.ts");

function start(configText: string, onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const dir = mkdtempSync(join(tmpdir(), "auto-reply-startup-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "config.json5");
  writeFileSync(file, configText);
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of ["AGENT_KERNEL_CONFIG", "AGENT_KERNEL_STATE_DIR", "NODE_OPTIONS"]) delete env[name];
  const child = spawn(
    process.execPath,
    ["--conditions=@agent-kernel/source", MAIN, "--config", file, "--state-dir", join(dir, "state")],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  onTestFinished(() => void child.kill("SIGKILL"));
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

describe.concurrent("auto-reply start-up", () => {
  it("retries a retryable Telegram start-up error with backoff, then runs", async ({ onTestFinished }) => {
    const telegram = await startFakeTelegram();
    onTestFinished(() => telegram.close());
    // more 500s than the adapter's own 4 attempts: the first start fails with a retryable error
    telegram.failNext({ kind: "server_error", method: "getMe", times: 5 });
    const run = start(
      `{ channels: { telegram: { enabled: true, botToken: "${telegram.token}", apiBaseUrl: "${telegram.url}", pollTimeoutSeconds: 1, dmPolicy: "open", allowFrom: ["*"] } } }`,
      onTestFinished,
    );
    while (!run.stderr().includes("listening on telegram:default")) {
      if (run.child.exitCode !== null) throw new Error(`exited early: ${run.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(run.stderr()).toMatch(/\[auto-reply\] telegram: .*; retrying in \d+\.\ds \(retry 1 of 8\)\n/);
    run.child.kill("SIGINT");
    expect(await run.exited).toBe(130);
  }, 120_000);

  it("a token Telegram refuses is one line and exit 3", async ({ onTestFinished }) => {
    const telegram = await startFakeTelegram();
    onTestFinished(() => telegram.close());
    const run = start(
      `{ channels: { telegram: { enabled: true, botToken: "999:wrong", apiBaseUrl: "${telegram.url}", dmPolicy: "open", allowFrom: ["*"] } } }`,
      onTestFinished,
    );
    expect(await run.exited).toBe(3);
    expect(run.stderr()).toMatch(
      /^auto-reply: telegram: .* — Telegram refused the bot token: check channels\.telegram\.botToken\n$/,
    );
  }, 60_000);

  it("Slack's invalid_auth is one line and exit 3", async ({ onTestFinished }) => {
    const slack = await startFakeSlack({ signingSecret: "shh" });
    onTestFinished(() => slack.close());
    slack.failNext("auth.test", { kind: "error", error: "invalid_auth" });
    const run = start(
      `{ channels: { slack: { enabled: true, botToken: "${slack.botToken}", signingSecret: "shh", apiBaseUrl: "${slack.apiBaseUrl}", dmPolicy: "open", allowFrom: ["*"] } } }`,
      onTestFinished,
    );
    expect(await run.exited).toBe(3);
    expect(run.stderr()).toMatch(
      /^auto-reply: slack: auth\.test: invalid_auth .* — Slack refused the bot token: check channels\.slack\.botToken\n$/,
    );
  }, 60_000);
});
