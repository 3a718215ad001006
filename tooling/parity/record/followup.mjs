// Records OpenClaw 2026.9.6 queue vectors for apps/followup (src/prompts.ts and the cap in src/runner.ts):
// `applyQueueDropPolicy` (which message a full queue drops or refuses, and each dropped message's one-line
// summary, at most `cap` lines kept), `previewQueueSummaryPrompt` (the overflow block) and `buildCollectPrompt`
// (the collect turn; its per-item rendering, `renderCollectItemPrompt`, is internal to OpenClaw's drain chunk
// and copied verbatim below from dist/drain-*.mjs).
// Run (manual, needs Node 24 and the unpacked package), from the repo root:
//   OPENCLAW_DIST=/work/openclaw-env/openclaw/package/dist /work/openclaw-env/node24/package/bin/node tooling/parity/record/followup.mjs
// Writes apps/followup/fixtures/openclaw/queue.json.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { get } from "../load-openclaw.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(here, "../../../apps/followup/fixtures/openclaw/queue.json");

const applyQueueDropPolicy = await get("applyQueueDropPolicy");
const previewQueueSummaryPrompt = await get("previewQueueSummaryPrompt");
const buildCollectPrompt = await get("buildCollectPrompt");

// OpenClaw's drain.ts, verbatim (not exported from the bundle).
function buildCollectItemPrefix(item, idx) {
  const senderLabel =
    item.run.senderName ?? item.run.senderUsername ?? item.run.senderId ?? item.run.senderE164;
  const senderSuffix = senderLabel ? ` (from ${senderLabel})` : "";
  return `---\nQueued #${idx + 1}${senderSuffix}\n`;
}
function renderCollectItemPrompt(item, idx, prompt) {
  return `${buildCollectItemPrefix(item, idx)}${prompt}`.trim();
}

const long = `please   look at\nthe ${"very ".repeat(40)}long report`;
const emoji = `${"x".repeat(158)}😀 tail`;
const dropCases = [
  { cap: 2, dropPolicy: "summarize", items: ["a", "b"] },
  { cap: 2, dropPolicy: "summarize", items: [long, "b"] },
  { cap: 2, dropPolicy: "summarize", items: [emoji, "b"] },
  { cap: 1, dropPolicy: "summarize", items: ["one", "two"], droppedCount: 1, summaryLines: ["zero"] },
  { cap: 3, dropPolicy: "summarize", items: ["  spaced\t\tout \n text ", "b", "c"] },
  { cap: 2, dropPolicy: "old", items: ["a", "b"] },
  { cap: 2, dropPolicy: "new", items: ["a", "b"] },
  { cap: 3, dropPolicy: "new", items: ["a", "b"] },
  { cap: 1, dropPolicy: "old", items: ["a"] },
];
const drop = dropCases.map((input) => {
  const queue = {
    cap: input.cap,
    dropPolicy: input.dropPolicy,
    items: input.items.map((prompt) => ({ prompt })),
    droppedCount: input.droppedCount ?? 0,
    summaryLines: [...(input.summaryLines ?? [])],
  };
  const accepted = applyQueueDropPolicy({ queue, summarize: (item) => item.prompt });
  return {
    input,
    output: {
      accepted,
      remaining: queue.items.map((item) => item.prompt),
      droppedCount: queue.droppedCount,
      summaryLines: queue.summaryLines,
    },
  };
});

const summaryCases = [
  { droppedCount: 0, summaryLines: [] },
  { droppedCount: 1, summaryLines: ["a"] },
  { droppedCount: 3, summaryLines: ["b", "c"] },
  { droppedCount: 2, summaryLines: [] },
];
const summary = summaryCases.map((state) => ({
  input: state,
  output: previewQueueSummaryPrompt({ state, noun: "message" }) ?? null,
}));

const collectCases = [
  { items: [{ text: "one" }] },
  {
    items: [
      { text: "what about tests?", sender: "alice" },
      { text: "  padded  \n" },
      { text: "x", sender: "bob" },
    ],
  },
  { items: [{ text: "three" }], summary: "[Queue overflow] Dropped 2 messages due to cap.\nSummary:\n- two" },
];
const collect = collectCases.map((input) => ({
  input,
  output: buildCollectPrompt({
    title: "[Queued messages while agent was busy]",
    items: input.items.map((item) => ({ prompt: item.text, run: { senderId: item.sender } })),
    ...(input.summary ? { summary: input.summary } : {}),
    renderItem: (item, index) => renderCollectItemPrompt(item, index, item.prompt),
  }),
}));

fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify({ openclaw: "2026.9.6", drop, summary, collect }, null, 2)}\n`);
console.log(
  `wrote ${path.relative(process.cwd(), out)}: ${drop.length} drop, ${summary.length} summary, ${collect.length} collect vectors`,
);
