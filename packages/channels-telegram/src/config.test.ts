import { parseConfigText } from "@agent-kernel/config";
import { privateChat, startFakeTelegram, user } from "@agent-kernel/fake-telegram";
import { describe, expect, it } from "vitest";
import { createTelegramChannel, telegramOptionsFromConfig } from "./channel.ts";

describe("telegramOptionsFromConfig", () => {
  it("takes botToken (${ENV}), apiBaseUrl, pollTimeoutSeconds and textChunkLimit from channels.telegram", async () => {
    const fake = await startFakeTelegram();
    try {
      const config = parseConfigText(
        `{ channels: { telegram: { botToken: "\${TELEGRAM_BOT_TOKEN}", apiBaseUrl: "${fake.url}", pollTimeoutSeconds: 2, textChunkLimit: 100 } } }`,
        { env: { TELEGRAM_BOT_TOKEN: fake.token }, cpuCount: 2 },
      );
      const telegram = config.channels.telegram;
      if (telegram === undefined) throw new Error("channels.telegram missing");
      const options = telegramOptionsFromConfig(telegram, { accountId: "work" });
      expect(options).toMatchObject({
        token: fake.token,
        apiBaseUrl: fake.url,
        pollTimeoutSeconds: 2,
        textChunkLimit: 100,
        accountId: "work",
      });
      const alice = user(42, "Alice");
      fake.addChat(privateChat(alice));
      const channel = createTelegramChannel(options);
      const result = await channel.send({
        target: { accountId: "work", chatId: "42" },
        text: "word ".repeat(60),
      });
      expect(result.messages.length).toBe(4);
      for (const call of fake.sent) expect(String(call.params.text).length).toBeLessThanOrEqual(100);
      expect(channel.accountId).toBe("work");
    } finally {
      await fake.close();
    }
  });

  it("a missing token is a clear error", () => {
    const config = parseConfigText("{ channels: { telegram: {} } }", { env: {}, cpuCount: 2 });
    const telegram = config.channels.telegram;
    if (telegram === undefined) throw new Error("channels.telegram missing");
    expect(() => telegramOptionsFromConfig(telegram)).toThrow(
      "telegram: channels.telegram.botToken is not set (use ${TELEGRAM_BOT_TOKEN})",
    );
  });
});
