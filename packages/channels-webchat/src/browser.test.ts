// The chat page in a real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core): a message
// typed and sent reaches the handler, and a streamed reply shows up block by block. Each block waits on a gate
// the test opens only after it has seen the previous state in the DOM, so the intermediate states are observed
// deterministically rather than raced. A screenshot is kept in test-artifacts/webchat.png.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InboundMessage } from "@agent-kernel/channels-core";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebchatChannel, type WebchatChannel } from "./index.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts");

/** A promise with its resolver, to hold the reply until the test has looked at the page. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("webchat page in headless Chromium", () => {
  let adapter: WebchatChannel;
  let context: BrowserContext;
  let userDataDir: string;
  const received: InboundMessage[] = [];
  const gates = [gate(), gate(), gate()];
  let replyDone: Promise<void> | undefined;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium) to run the web chat browser test`,
      );
    adapter = createWebchatChannel({ port: 0 });
    await adapter.start({
      onMessage: async (message) => {
        received.push(message);
        const target = { accountId: message.accountId, chatId: message.conversation.chatId };
        // the reply runs after the message is accepted, as the gateway's turn would
        replyDone = (async () => {
          await adapter.sendTyping(target);
          const blocks = [
            "Block one: thinking about it.",
            "Block two: <b>not bold</b> & not markup.",
            "Block three: done.",
          ];
          for (const [index, text] of blocks.entries()) {
            await gates[index]?.promise;
            await pause(30);
            await adapter.send({ target, text, isBlock: true });
          }
          await pause(30);
          await adapter.send({ target, text: "Final answer: 42 <img src=x onerror=alert(1)>" });
        })();
      },
    });
    userDataDir = await mkdtemp(join(tmpdir(), "webchat-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 720, height: 560 },
    });
  });

  afterAll(async () => {
    await context?.close();
    await adapter?.stop();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  const blockTexts = (page: Page) => page.locator("#log .block").allTextContents();

  it("sends a typed message and renders the streamed blocks in order as they arrive", async () => {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    const pageUrl = adapter.pageUrl;
    if (!pageUrl) throw new Error("no page url");
    await page.goto(pageUrl);
    // the token leaves the address bar once read
    await expect.poll(() => page.url()).not.toContain("token=");
    await page.locator("#send:not([disabled])").waitFor();

    await page.locator("#input").fill("Hello from Chromium");
    await page.locator("#send").click();
    await page.locator(".msg.user").filter({ hasText: "Hello from Chromium" }).waitFor();
    await expect.poll(() => received.map((m) => m.text)).toEqual(["Hello from Chromium"]);
    expect(received[0]?.conversation.chatId).toMatch(/^c-[0-9a-f-]{36}$/);

    // typing shows before anything arrives
    await page.locator("#typing:not([hidden])").waitFor();
    expect(await blockTexts(page)).toEqual([]);

    gates[0]?.open();
    await page.locator("#log .block").nth(0).waitFor();
    expect(await blockTexts(page)).toEqual(["Block one: thinking about it."]);
    expect(await page.locator(".msg.bot.streaming").count()).toBe(1);

    gates[1]?.open();
    await page.locator("#log .block").nth(1).waitFor();
    expect(await blockTexts(page)).toEqual([
      "Block one: thinking about it.",
      "Block two: <b>not bold</b> & not markup.",
    ]);
    expect(await page.locator(".msg.final").count()).toBe(0);

    gates[2]?.open();
    await page.locator(".msg.final").waitFor();
    await replyDone;
    expect(await blockTexts(page)).toEqual([
      "Block one: thinking about it.",
      "Block two: <b>not bold</b> & not markup.",
      "Block three: done.",
    ]);
    expect(await page.locator(".msg.final").textContent()).toBe(
      "Final answer: 42 <img src=x onerror=alert(1)>",
    );
    // text stays text: no element was made from the bot's words
    expect(await page.locator("#log b, #log img").count()).toBe(0);
    expect(await page.locator(".msg.streaming").count()).toBe(0);
    expect(await page.locator("#typing").isHidden()).toBe(true);
    expect(pageErrors).toEqual([]);

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "webchat.png") });
    expect(existsSync(join(ARTIFACTS, "webchat.png"))).toBe(true);
  });

  it("shows the page as unauthorised without the token", async () => {
    const page = await context.newPage();
    const base = adapter.url;
    if (!base) throw new Error("no url");
    await page.goto(`${base}/#token=wrong`);
    await expect.poll(() => page.locator("#status").textContent()).toMatch(/not authorised/);
    expect(await page.locator("#send").isDisabled()).toBe(true);
  });
});
