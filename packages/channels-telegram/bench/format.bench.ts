// What formatting and splitting a long reply costs: escaping the text alone (baseline), the Markdown →
// MarkdownV2 / HTML renderers (channels-core's), and the whole chunkForTelegram (pack lines, format, measure)
// at 4096.
import { defineSuite } from "@agent-kernel/bench";
import { chunkForTelegram } from "../src/chunk.ts";
import { escapeMarkdownV2, markdownToTelegramHtml, markdownToTelegramV2 } from "../src/format.ts";

const section = [
  "## Step 3: configure the *gateway*",
  "",
  "Set `channels.telegram.botToken` and restart. The **offset** is saved after each update (see [docs](https://example.test/docs_(v2))).",
  "> Note: a 429 answer carries `retry_after`; we wait exactly that long.",
  "",
  "```ts",
  'const channel = createTelegramChannel({ token: process.env.TELEGRAM_BOT_TOKEN ?? "" });',
  "await channel.start({ onMessage: async (m) => console.log(m.text) });",
  "```",
  "",
  "- item one (1.5) - done!",
  "- item two: _italic_ and ~~struck~~ text.",
  "",
].join("\n");
const reply = section.repeat(Math.ceil(20_000 / section.length));

export default defineSuite({
  name: `format a ${Math.round(reply.length / 1000)} kB Markdown reply for Telegram`,
  baseline: "escapeMarkdownV2 (escape only)",
  iterations: 20,
  bytesPerIteration: reply.length,
  cases: [
    { name: "escapeMarkdownV2 (escape only)", run: () => escapeMarkdownV2(reply) },
    { name: "markdownToTelegramV2", run: () => markdownToTelegramV2(reply) },
    { name: "markdownToTelegramHtml", run: () => markdownToTelegramHtml(reply) },
    { name: "chunkForTelegram MarkdownV2 @4096", run: () => chunkForTelegram(reply, 4096, "MarkdownV2") },
  ],
});
