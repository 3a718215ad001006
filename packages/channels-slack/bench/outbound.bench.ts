// What the Slack adapter's own work costs per request, against a baseline measured in the same run:
// formatting and chunking a long reply against escaping it only, and verifying an Events API request's
// signature against parsing its JSON body.

import { defineSuite } from "@agent-kernel/bench";
import { signSlackRequest } from "@agent-kernel/fake-slack";
import {
  escapeSlackText,
  formatSlackChunks,
  markdownToSlackMrkdwn,
  verifySlackSignature,
} from "../src/index.ts";

const paragraph =
  "The **release** ships on _Friday_ & includes [the notes](https://example.dev/notes?a=1&b=2). See `config.ts` for <details>.\n\n";
const code =
  '```ts\nconst total = items.reduce((sum, item) => sum + item.price, 0);\nif (total > limit && !override) throw new Error("over");\n```\n\n';
const reply = (paragraph.repeat(6) + code).repeat(12); // ≈ 10 KB
const REPEAT = 20;

const body = JSON.stringify({
  type: "event_callback",
  event_id: "Ev123",
  team_id: "T1",
  event: { type: "message", channel: "C1", user: "U1", text: "hello ".repeat(50), ts: "1700000000.000100" },
});
const now = 1_700_000_000;
const signature = signSlackRequest("secret", now, body);
const VERIFY_REPEAT = 2000;

export default [
  defineSuite({
    name: `format a ${Math.round(reply.length / 1024)} KB reply for Slack ×${REPEAT}`,
    baseline: "escape only",
    iterations: 10,
    bytesPerIteration: reply.length * REPEAT,
    cases: [
      {
        name: "escape only",
        run: () => {
          for (let i = 0; i < REPEAT; i++) escapeSlackText(reply);
        },
      },
      {
        name: "markdown → mrkdwn",
        run: () => {
          for (let i = 0; i < REPEAT; i++) markdownToSlackMrkdwn(reply);
        },
      },
      {
        name: "split at 4000 + markdown → mrkdwn",
        run: () => {
          for (let i = 0; i < REPEAT; i++) formatSlackChunks(reply, 4000);
        },
      },
    ],
  }),
  defineSuite({
    name: `an Events API request ×${VERIFY_REPEAT}`,
    baseline: "JSON.parse of the body",
    iterations: 10,
    itemsPerIteration: VERIFY_REPEAT,
    cases: [
      {
        name: "JSON.parse of the body",
        run: () => {
          for (let i = 0; i < VERIFY_REPEAT; i++) JSON.parse(body);
        },
      },
      {
        name: "verify signature (HMAC-SHA256, constant-time compare)",
        run: () => {
          for (let i = 0; i < VERIFY_REPEAT; i++)
            verifySlackSignature({
              signingSecret: "secret",
              timestamp: String(now),
              signature,
              rawBody: body,
              nowSeconds: now,
            });
        },
      },
    ],
  }),
];
