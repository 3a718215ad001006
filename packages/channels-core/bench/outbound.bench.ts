// What formatting costs on top of splitting: a 24 KB agent reply (prose, lists, links, inline code and two
// long code blocks) split at Telegram's 4096 (baseline), then formatted and split for each dialect.
import { defineSuite } from "@agent-kernel/bench";
import { formatAndSplit, splitText } from "../src/index.ts";

const paragraph =
  "The **kernel** prepares a session, then runs the turn through `executeTurn`; see [the docs](https://example.dev/docs_(v2)) " +
  "for details. Edge cases: a_b*c, 1 + 1 = 2. Done!\n- item one\n- item _two_ with ~~old~~ text\n\n";
const code = `\`\`\`ts\n${Array.from({ length: 120 }, (_unused, i) => `const value${i} = compute(${i}) * 2; // <${i}>`).join("\n")}\n\`\`\`\n\n`;
const reply = (paragraph.repeat(40) + code).repeat(2);
const LIMIT = 4096;

export default defineSuite({
  name: `outbound text: ${Math.round(reply.length / 1024)} KB reply at ${LIMIT}`,
  baseline: "splitText (no formatting)",
  iterations: 20,
  itemsPerIteration: 1,
  cases: [
    { name: "splitText (no formatting)", run: () => void splitText(reply, LIMIT) },
    {
      name: "formatAndSplit telegram-markdown-v2",
      run: () => void formatAndSplit(reply, "telegram-markdown-v2", LIMIT),
    },
    { name: "formatAndSplit telegram-html", run: () => void formatAndSplit(reply, "telegram-html", LIMIT) },
    { name: "formatAndSplit slack-mrkdwn", run: () => void formatAndSplit(reply, "slack-mrkdwn", LIMIT) },
  ],
});
