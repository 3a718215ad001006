// `agent-kernel channels list|status --probe` against tooling/fake-telegram and tooling/fake-slack (real
// HTTP on loopback): the right tokens answer (getMe, auth.test), a wrong token fails the probe with exit 1,
// a missing token is named, and the web chat is reported as not answering while no gateway runs.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeSlack, startFakeSlack } from "@agent-kernel/fake-slack";
import { type FakeTelegram, startFakeTelegram } from "@agent-kernel/fake-telegram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configText, createHarness, type Harness } from "../../test/harness.ts";
import { EXIT } from "../errors.ts";

let h: Harness;
let telegram: FakeTelegram;
let slack: FakeSlack;

function channels(telegramToken: string, slackToken: string): string {
  return `channels: {
    telegram: { enabled: true, botToken: ${JSON.stringify(telegramToken)}, apiBaseUrl: ${JSON.stringify(telegram.url)} },
    slack: { enabled: true, botToken: ${JSON.stringify(slackToken)}, signingSecret: "s3cret", apiBaseUrl: ${JSON.stringify(slack.apiBaseUrl)} },
    webchat: { enabled: true, port: 9 },
    discord: { enabled: false },
  },`;
}

beforeAll(async () => {
  telegram = await startFakeTelegram();
  slack = await startFakeSlack();
  h = await createHarness(channels(telegram.token, slack.botToken));
}, 60_000);
afterAll(async () => {
  await h?.close();
  await telegram?.close();
  await slack?.close();
});

describe("agent-kernel channels", () => {
  it("list shows every configured channel, enabled or not", async () => {
    const list = await h.run(["channels", "list", "--json"]);
    expect(list.code).toBe(EXIT.ok);
    expect(
      JSON.parse(list.stdout).channels.map((c: { id: string; enabled: boolean }) => [c.id, c.enabled]),
    ).toEqual([
      ["discord", false],
      ["slack", true],
      ["telegram", true],
      ["webchat", true],
    ]);
  });

  it("status --probe asks Telegram and Slack with the configured tokens", async () => {
    const status = await h.run(["channels", "status", "--probe", "--json"]);
    const report = JSON.parse(status.stdout) as {
      channels: { id: string; probe: { ok: boolean; detail: string } }[];
    };
    const probe = Object.fromEntries(report.channels.map((channel) => [channel.id, channel.probe]));
    expect(probe.telegram).toEqual({ ok: true, detail: `bot @${telegram.bot.username}` });
    expect(probe.slack).toEqual({ ok: true, detail: "bot bot in Fake Team" });
    expect(telegram.calls.map((call) => call.method)).toContain("getMe");
    expect(slack.callsTo("auth.test")).toHaveLength(1);
    // nothing serves the web chat's port while no gateway runs: the one failing probe, exit 1
    expect(probe.webchat?.ok).toBe(false);
    expect(probe.webchat?.detail).toContain("is the gateway running?");
    expect(status.code).toBe(EXIT.failed);
  });

  it("a wrong token fails its probe; a missing one is named without probing", async () => {
    const wrong = join(h.root, "wrong.json5");
    writeFileSync(
      wrong,
      configText(h.llm.baseUrlFor("openai"), h.workspaceDir, channels("123456:wrong", "xoxb-wrong")),
    );
    const status = await h.run(["channels", "status", "--probe", "--config", wrong]);
    expect(status.code).toBe(EXIT.failed);
    expect(status.stdout).toMatch(
      /^slack +problem: auth\.test: invalid_auth|slack +problem: .*invalid_auth/m,
    );
    expect(status.stdout).toMatch(/^telegram +problem: /m);

    const missing = join(h.root, "missing.json5");
    writeFileSync(
      missing,
      configText(h.llm.baseUrlFor("openai"), h.workspaceDir, "channels: { telegram: { enabled: true } },"),
    );
    const unprobed = await h.run(["channels", "status", "--config", missing]);
    expect(unprobed.code).toBe(EXIT.failed);
    expect(unprobed.stdout).toContain("problem: channels.telegram.botToken is not set");
  });
});
