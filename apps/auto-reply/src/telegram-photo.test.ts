// A Telegram photo end to end: fake-telegram → the real Telegram adapter (getFile, file download) → the
// gateway → a real kernel turn → pi → tooling/fake-llm. The picture is in that turn's model request, with the
// caption as the prompt, and in no later turn's request.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTelegramChannel, telegramOptionsFromConfig } from "@agent-kernel/channels-telegram";
import { reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { privateChat, startFakeTelegram, user } from "@agent-kernel/fake-telegram";
import { expect, it } from "vitest";
import { testConfig } from "../test/gateway-harness.ts";
import { imageUrls, PNG_1X1, visionModels } from "../test/pictures.ts";
import { createAutoReplyGateway, type HandledTurn } from "./index.ts";

it("a Telegram photo reaches the model with its own turn only", { timeout: 120_000 }, async ({
  onTestFinished,
}) => {
  const root = mkdtempSync(join(tmpdir(), "auto-reply-photo-"));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const workspaceDir = join(root, "workspace");
  mkdirSync(workspaceDir, { recursive: true });
  const llm = await startFakeLlm();
  onTestFinished(() => llm.close());
  const telegram = await startFakeTelegram();
  onTestFinished(() => telegram.close());
  const config = testConfig(llm.baseUrlFor("openai"), workspaceDir, {
    models: visionModels(llm.baseUrlFor("openai")),
    channels: {
      telegram: {
        enabled: true,
        botToken: telegram.token,
        apiBaseUrl: telegram.url,
        pollTimeoutSeconds: 1,
        dmPolicy: "open",
        allowFrom: ["*"],
      },
    },
  });
  const telegramConfig = config.channels.telegram;
  if (telegramConfig === undefined) throw new Error("no channels.telegram");
  const errors: string[] = [];
  const adapter = createTelegramChannel(
    telegramOptionsFromConfig(telegramConfig, { onError: (error) => errors.push(error.message) }),
  );
  const turns: HandledTurn[] = [];
  let wake = () => {};
  const gateway = createAutoReplyGateway({
    config,
    stateDir: join(root, "state"),
    channels: [adapter],
    kernelOptions: { executorSettings: { transientRetryDelayMs: 1 } },
    log: () => {},
    onTurnEnd: (turn) => {
      turns.push(turn);
      wake();
    },
  });
  await gateway.start();
  onTestFinished(() => gateway.stop());
  const turnCount = (count: number) =>
    new Promise<void>((resolve) => {
      wake = () => (turns.length >= count ? resolve() : undefined);
      wake();
    });

  llm.enqueue(reply("A single pixel."), reply("Nothing new."));
  const alice = user(42, "Alice");
  telegram.pushMessage({ chat: privateChat(alice), from: alice, photo: PNG_1X1, caption: "what is this?" });
  await turnCount(1);
  telegram.pushMessage({ chat: privateChat(alice), from: alice, text: "and now?" });
  await turnCount(2);

  expect(turns.map((turn) => turn.outcome?.status)).toEqual(["ok", "ok"]);
  expect(errors).toEqual([]);
  expect(llm.requests).toHaveLength(2);
  const [first, second] = llm.requests.map((request) => request.body);
  expect(imageUrls(first)).toEqual([`data:image/png;base64,${PNG_1X1.toString("base64")}`]);
  expect(JSON.stringify(first)).toContain("what is this?");
  expect(imageUrls(second)).toEqual([]);
  expect(JSON.stringify(second)).toContain("what is this?");
  const replies = telegram.messages(42).filter((message) => message.from?.id === telegram.bot.id);
  expect(replies.map((message) => message.text)).toEqual(["A single pixel.", "Nothing new."]);
});
