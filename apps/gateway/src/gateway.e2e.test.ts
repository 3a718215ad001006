// The gateway end to end: the BUILT daemon (dist/bin.js, built by turbo first) as a real process with tooling/fake-llm, the web chat page in a real headless Chromium
// (Debian's /usr/bin/chromium driven by playwright-core), tooling/fake-telegram and tooling/fake-slack all at
// once. It shows: a cron job delivering on its schedule through a channel (Slack); a Telegram stranger paired
// by `agent-kernel pairing approve` (the umbrella command, in its own process) and answered afterwards; a
// message steered into the running turn of its Slack conversation (one model run holds both); a web chat turn
// in the browser; `status` while running; and SIGTERM while a follow-up turn holds a claimed item — the item
// is released (pending, nothing claimed), the exit code is 143, and `logs --json` reads the structured log.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, type RecordedRequest, reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { type FakeSlack, startFakeSlack } from "@agent-kernel/fake-slack";
import { type FakeTelegram, privateChat, startFakeTelegram, user } from "@agent-kernel/fake-telegram";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway, GATEWAY_BIN, REPO_ROOT } from "../test/build.ts";

const REPO = REPO_ROOT;
const UMBRELLA_MAIN = join(REPO, "apps", "agent-kernel", "src", "main.ts");
const CHROMIUM = "/usr/bin/chromium";

/** The texts of the user messages a model request carried, in order. */
function userTexts(request: RecordedRequest | undefined): string[] {
  const body = request?.body as { messages?: { role: string; content: unknown }[] } | undefined;
  return (body?.messages ?? [])
    .filter((message) => message.role === "user")
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : (message.content as { type: string; text?: string }[])
            .map((part) => (part.type === "text" ? (part.text ?? "") : ""))
            .join(""),
    );
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

async function until(
  what: string,
  check: () => boolean,
  context: () => string,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}\n--- gateway output ---\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A port free right now (the OS picks it), for the config's `channels.slack.port`. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function cleanEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" };
  for (const name of ["AGENT_KERNEL_CONFIG", "AGENT_KERNEL_STATE_DIR", "NODE_OPTIONS"]) delete env[name];
  return env;
}

/** Runs a command to its end: exit code and output. */
function runToEnd(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      cwd: REPO,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("agent-kernel gateway: channels, cron and the follow-up queue in one process", () => {
  let root: string;
  let configPath: string;
  let stateDir: string;
  let llm: FakeLlm;
  let telegram: FakeTelegram;
  let slack: FakeSlack;
  let gateway: ChildProcess;
  let output = "";
  let exited: Promise<number | null>;
  let context: BrowserContext | undefined;
  let slackPort = 0;
  let userDataDir: string | undefined;
  const longTaskGate = gate();
  const partOneGate = gate();
  const common = () => ["--config", configPath, "--state-dir", stateDir];
  const logged = () => output;

  beforeAll(async () => {
    buildGateway();
    if (!existsSync(CHROMIUM))
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium package to run the gateway's browser test`,
      );
    root = mkdtempSync(join(tmpdir(), "gateway-e2e-"));
    stateDir = join(root, "state");
    const workspaceDir = join(root, "workspace");
    mkdirSync(workspaceDir, { recursive: true });
    llm = await startFakeLlm();
    // One router for every model call, by the last thing the user said (the channels run concurrently).
    llm.setScenario({
      fallback: async (request) => {
        const texts = userTexts(request);
        const last = texts.at(-1) ?? "";
        if (last.includes("cron ping")) return reply("CRON-DELIVERED heartbeat");
        if (last.includes("cron added ping")) return reply("CRON-ADDED while running");
        if (last.includes("hello from chromium")) return reply("WEB-REPLY from the gateway");
        if (last.includes("hi again")) return reply("TG-REPLY welcome aboard");
        if (last.includes("STEER: also say banana")) return reply("BANANA: the steered answer");
        if (last.includes("long task")) {
          await longTaskGate.promise;
          return reply("first answer");
        }
        if (last.includes("part one")) {
          await partOneGate.promise;
          return reply("part one done");
        }
        // the follow-up turn the shutdown interrupts: it never answers
        if (last.includes("part two")) return { type: "stall" };
        return reply("ok");
      },
    });
    telegram = await startFakeTelegram();
    slack = await startFakeSlack({ signingSecret: "shh", botUserId: "UBOT", teamId: "T1" });
    slackPort = await freePort();
    configPath = join(root, "config.json5");
    writeFileSync(
      configPath,
      JSON.stringify(
        {
          models: {
            providers: {
              scripted: {
                baseUrl: llm.baseUrlFor("openai"),
                api: "openai-completions",
                apiKey: "sk-test-key",
                models: [{ id: "m1", contextWindow: 32_000, maxTokens: 4096 }],
              },
            },
          },
          agents: { defaults: { model: "scripted/m1", workspace: workspaceDir } },
          messages: { queue: { mode: "steer", byChannel: { telegram: "followup" }, debounceMs: 0 } },
          channels: {
            webchat: { port: 0, token: "e2e-token" },
            telegram: {
              enabled: true,
              botToken: telegram.token,
              apiBaseUrl: telegram.url,
              pollTimeoutSeconds: 1,
              dmPolicy: "pairing",
            },
            slack: {
              enabled: true,
              botToken: slack.botToken,
              signingSecret: "shh",
              apiBaseUrl: slack.apiBaseUrl,
              port: slackPort,
              dmPolicy: "open",
              allowFrom: ["*"],
            },
          },
          cron: {
            jobs: [
              {
                id: "heartbeat",
                schedule: { kind: "every", everySeconds: 4 },
                payload: { message: "cron ping" },
                delivery: { channel: "slack", to: "C0CRON" },
              },
            ],
          },
        },
        null,
        2,
      ),
    );
    gateway = spawn(process.execPath, [GATEWAY_BIN, "gateway", ...common(), "--grace", "1"], {
      cwd: root,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    gateway.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    gateway.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    exited = new Promise((resolve) => gateway.once("close", (code) => resolve(code)));
    await until("the gateway to be ready", () => output.includes("gateway running"), logged);
  }, 420_000);

  afterAll(async () => {
    longTaskGate.open();
    partOneGate.open();
    if (gateway?.exitCode === null) gateway.kill("SIGKILL");
    await context?.close();
    await Promise.allSettled([llm?.close(), telegram?.close(), slack?.close()]);
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("prints every URL it serves: the web chat link with its token, the Slack endpoint on the config's port", () => {
    expect(output).toMatch(/\[gateway\] web chat: http:\/\/127\.0\.0\.1:\d+\/#token=e2e-token\n/);
    expect(output).toContain(
      `[gateway] slack events endpoint: http://127.0.0.1:${slackPort}/slack/events (port ${slackPort})\n`,
    );
    expect(output).toContain("channel telegram:default started");
  });

  it("runs the cron job on its schedule and delivers through the Slack channel", async () => {
    await until(
      "the cron delivery",
      () =>
        slack.messages.some(
          (message) => message.channel === "C0CRON" && message.text.includes("CRON-DELIVERED"),
        ),
      logged,
    );
    expect(output).toMatch(/cron heartbeat: ok run \S+, delivery sent to slack:C0CRON/);
  }, 120_000);

  it("picks up a job `agent-kernel cron add` writes while it runs, and drops it after `cron rm`, without a restart", async () => {
    const cron = (...args: string[]) =>
      runToEnd(["--conditions=@agent-kernel/source", UMBRELLA_MAIN, "cron", ...args, ...common()]);
    const added = await cron(
      "add",
      "added",
      "--every",
      "3",
      "-m",
      "cron added ping",
      "--channel",
      "slack",
      "--to",
      "C0ADDED",
    );
    expect(added.code, added.stderr).toBe(0);
    await until("the reload line", () => output.includes("cron jobs reloaded: added added"), logged);
    await until(
      "the added job's delivery",
      () =>
        slack.messages.some(
          (message) => message.channel === "C0ADDED" && message.text.includes("CRON-ADDED"),
        ),
      logged,
    );
    const removed = await cron("rm", "added");
    expect(removed.code, removed.stderr).toBe(0);
    await until("the second reload line", () => output.includes("cron jobs reloaded: removed added"), logged);
  }, 120_000);

  it("answers in the web chat page in Chromium, and logs the turn in one line", async () => {
    const pageUrl = /web chat: (\S+)/.exec(output)?.[1];
    if (pageUrl === undefined) throw new Error(`no web chat link in: ${output}`);
    userDataDir = mkdtempSync(join(tmpdir(), "gateway-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
      ],
    });
    const page = await context.newPage();
    await page.goto(pageUrl);
    await page.locator("#send:not([disabled])").waitFor();
    await page.locator("#input").fill("hello from chromium");
    await page.locator("#send").click();
    await page
      .locator(".msg.bot")
      .filter({ hasText: "WEB-REPLY from the gateway" })
      .waitFor({ timeout: 90_000 });
    await until(
      "the web chat turn's log line",
      () => /turn webchat:\S+ session \S+ run \S+: ok/.test(output),
      logged,
    );
  }, 150_000);

  it("pairs a Telegram stranger through `agent-kernel pairing approve`, then answers them", async () => {
    const stranger = user(777, "Stranger");
    telegram.pushMessage({ chat: privateChat(stranger), from: stranger, text: "hi" });
    let code: string | undefined;
    await until(
      "the pairing code",
      () => {
        const text =
          telegram.messages(777).find((message) => message.from?.id === telegram.bot.id)?.text ?? "";
        code = /Pairing code: (\S+)/.exec(text)?.[1];
        return code !== undefined;
      },
      logged,
    );
    expect(llm.requests.some((request) => userTexts(request).includes("hi"))).toBe(false);
    const approved = await runToEnd([
      "--conditions=@agent-kernel/source",
      UMBRELLA_MAIN,
      "pairing",
      "approve",
      "telegram",
      code ?? "",
      ...common(),
    ]);
    expect(approved.code, approved.stderr).toBe(0);
    telegram.pushMessage({ chat: privateChat(stranger), from: stranger, text: "hi again" });
    await until(
      "the paired stranger's answer",
      () => telegram.messages(777).some((message) => message.text?.includes("TG-REPLY welcome aboard")),
      logged,
    );
  }, 150_000);

  it("steers a second Slack message into the running turn of its conversation", async () => {
    const endpoint = /slack events endpoint: (\S+)/.exec(output)?.[1] ?? "";
    const dm = (text: string, ts: string) => ({
      type: "message",
      channel: "D111",
      channel_type: "im",
      user: "U222",
      text,
      ts,
      team: "T1",
    });
    expect((await slack.deliverEvent(endpoint, dm("long task", "1700000001.1"))).status).toBe(200);
    await until(
      "the long task's model call",
      () => llm.requests.some((request) => userTexts(request).at(-1)?.includes("long task") === true),
      logged,
    );
    expect((await slack.deliverEvent(endpoint, dm("STEER: also say banana", "1700000002.1"))).status).toBe(
      200,
    );
    await until(
      "the steer to be queued",
      () => /queued slack:D111 message \S+ for busy session \S+ \[steer\]: queued/.test(output),
      logged,
    );
    longTaskGate.open();
    await until(
      "the steered answer",
      () => slack.messages.some((message) => message.channel === "D111" && message.text.includes("BANANA")),
      logged,
    );
    // One run, two model calls: the second carried both messages; the steered one had no turn of its own.
    const steered = llm.requests.find((request) => userTexts(request).at(-1)?.includes("STEER") === true);
    expect(userTexts(steered).slice(-2)).toEqual([
      expect.stringContaining("long task"),
      "STEER: also say banana",
    ]);
    await until("the steer log line", () => output.includes("steered message"), logged);
    expect(output).not.toMatch(/follow-up turn slack:/);
  }, 150_000);

  it("status reports the running daemon, its channels and the queue", async () => {
    const status = await runToEnd([GATEWAY_BIN, "status", "--json", ...common()]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      running: true,
      pid: gateway.pid,
      queue: { claimed: 0 },
      channels: expect.arrayContaining([
        expect.objectContaining({ id: "webchat" }),
        expect.objectContaining({ id: "slack" }),
      ]),
    });
  }, 60_000);

  it("SIGTERM with a follow-up turn running: its claimed item is released, nothing stays claimed, exit 143", async () => {
    const stranger = user(777, "Stranger");
    telegram.pushMessage({ chat: privateChat(stranger), from: stranger, text: "part one" });
    await until(
      "part one's model call",
      () => llm.requests.some((request) => userTexts(request).at(-1)?.includes("part one") === true),
      logged,
    );
    telegram.pushMessage({ chat: privateChat(stranger), from: stranger, text: "part two" });
    await until(
      "part two to be queued",
      () => /queued telegram:777 message \S+ for busy session \S+ \[followup\]: queued/.test(output),
      logged,
    );
    partOneGate.open();
    // part two runs as its own follow-up turn (claimed) and never answers
    await until(
      "the follow-up turn's model call",
      () => llm.requests.some((request) => userTexts(request).at(-1)?.includes("part two") === true),
      logged,
    );
    const during = await runToEnd([GATEWAY_BIN, "status", "--json", ...common()]);
    expect(JSON.parse(during.stdout)).toMatchObject({ running: true, queue: { claimed: 1 } });

    gateway.kill("SIGTERM");
    expect(await exited).toBe(143);
    expect(output).toContain("released 1 claimed follow-up item(s) back to pending");
    expect(output).not.toMatch(/\n\s+at \S+ \(/);

    const after = await runToEnd([GATEWAY_BIN, "status", "--json", ...common()]);
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stdout)).toMatchObject({ running: false, queue: { pending: 1, claimed: 0 } });

    const logs = await runToEnd([GATEWAY_BIN, "logs", "--json", "--lines", "500", ...common()]);
    expect(logs.code, logs.stderr).toBe(0);
    const records = logs.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg: string; event?: string });
    expect(records.some((record) => record.event === "turn")).toBe(true);
    expect(records.some((record) => record.event === "cron")).toBe(true);
    expect(records.at(-1)?.event).toBe("stopped");
  }, 180_000);
});
