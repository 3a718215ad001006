// Attaching a picture in the chat page, in a real headless Chromium (Debian's /usr/bin/chromium driven by
// playwright-core): the file picked in the page reaches the handler as `images` with its bytes; a file that is
// not a picture is refused and the page marks the message as not delivered, saying why.
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InboundMessage } from "@agent-kernel/channels-core";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebchatChannel, type WebchatChannel } from "./index.ts";

const CHROMIUM = "/usr/bin/chromium";
const PNG = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
]);

describe("webchat page: attaching images in headless Chromium", () => {
  let adapter: WebchatChannel;
  let context: BrowserContext;
  let userDataDir: string;
  const received: InboundMessage[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium) to run the web chat browser test`,
      );
    adapter = createWebchatChannel({ port: 0 });
    await adapter.start({
      onMessage: async (message) => {
        received.push(message);
      },
    });
    userDataDir = await mkdtemp(join(tmpdir(), "webchat-chromium-images-"));
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
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await adapter?.stop();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  it("sends a picked PNG with the text, and refuses a file that is not a picture", async () => {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    const pageUrl = adapter.pageUrl;
    if (!pageUrl) throw new Error("no page url");
    await page.goto(pageUrl);
    await page.locator("#send:not([disabled])").waitFor();

    await page.locator("#attach").setInputFiles({ name: "cat.png", mimeType: "image/png", buffer: PNG });
    await expect.poll(() => page.locator("#attached").textContent()).toBe("Attached: cat.png");
    await page.locator("#input").fill("What is in this picture?");
    await page.locator("#send").click();
    await expect.poll(() => received.length, { timeout: 20_000 }).toBe(1);
    expect(received[0]?.text).toBe("What is in this picture?");
    expect(received[0]?.images).toEqual([
      { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
    ]);
    expect(received[0]?.media).toEqual([
      { kind: "image", mimeType: "image/png", sizeBytes: PNG.length, fileName: "cat.png" },
    ]);
    await page.locator(".msg.user .attachment").filter({ hasText: "[image: cat.png]" }).waitFor();
    expect(await page.locator("#attached").isHidden()).toBe(true);

    // A picture alone (no words), and a text file dressed as a PNG.
    await page.locator("#attach").setInputFiles({
      name: "notes.png",
      mimeType: "image/png",
      buffer: Buffer.from("just text"),
    });
    await page.locator("#send").click();
    const refused = page.locator(".msg.user.failed");
    await refused.waitFor();
    expect(await refused.getAttribute("title")).toBe(
      "not delivered: images[0]: not a PNG, JPEG, GIF or WebP image",
    );
    expect(received).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
