// Records OpenClaw 2026.9.6's compaction-safeguard helpers for turn-pipeline's compaction-safeguard.ts:
// the tool-failure section (`collectToolFailures` + `formatToolFailuresSection`), the bounded file lists
// (`formatFileOperations`), the adaptive chunk ratio (`computeAdaptiveChunkRatio`) and the history share
// plan (`buildHistoryPrunePlan`: which messages are kept and how many dropped) on fixed inputs. The
// safeguard's helpers are reached through the test API OpenClaw publishes under VITEST.
//
// Run (manual; needs Node 24 and the unpacked package, see ../README.md), from the repo root:
//   VITEST=1 OPENCLAW_DIST=/tmp/oc-env/openclaw/package/dist /tmp/oc-env/node24/package/bin/node tooling/parity/record/compaction-safeguard.mjs
// Writes packages/turn-pipeline/fixtures/openclaw/compaction-safeguard/helpers.json.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DIST, get } from "../load-openclaw.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(
  here,
  "../../../packages/turn-pipeline/fixtures/openclaw/compaction-safeguard/helpers.json",
);

// The safeguard is not exported; importing its chunk publishes the test API.
const chunk = fs
  .readdirSync(DIST)
  .find((file) => file.startsWith("builtin-openclaw-") && file.endsWith(".mjs"));
if (!chunk) throw new Error("no builtin-openclaw chunk in OPENCLAW_DIST");
await import(path.join(DIST, chunk));
const api = globalThis[Symbol.for("openclaw.compactionSafeguardTestApi")];
if (!api) throw new Error("run with VITEST=1: the safeguard's test API is published only then");
const buildHistoryPrunePlan = await get("buildHistoryPrunePlan");

const text = (t) => ({ type: "text", text: t });
const failed = (id, name, body, details) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: body === null ? [] : [text(body)],
  isError: true,
  details,
  timestamp: 3,
});
const ok = (id, name, body) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [text(body)],
  isError: false,
  timestamp: 3,
});
const user = (t) => ({ role: "user", content: t, timestamp: 1 });
const answer = (t) => ({ role: "assistant", content: [text(t)], stopReason: "stop", timestamp: 2 });
const call = (id, name) => ({
  role: "assistant",
  content: [{ type: "toolCall", id, name, arguments: { path: `${id}.txt` } }],
  stopReason: "toolUse",
  timestamp: 2,
});

const failureInputs = {
  none: [user("hi"), answer("hello")],
  "one failure": [call("c1", "read"), failed("c1", "read", 'file "missing.txt" does not exist')],
  "failure with status and exit code": [
    call("c1", "exec"),
    failed("c1", "exec", "boom\n\n  multi   line", { status: "error", exitCode: 2 }),
  ],
  "no output": [failed("c1", "exec", null), failed("c2", "exec", null, { exitCode: 1 })],
  "long text": [failed("c1", "web_fetch", "x".repeat(400))],
  duplicate: [failed("c1", "read", "first"), failed("c1", "read", "again"), ok("c2", "read", "fine")],
  "ten failures": Array.from({ length: 10 }, (_, i) => failed(`c${i}`, i % 2 ? "exec" : "", `failure ${i}`)),
  "no tool call id": [failed("", "read", "lost")],
};
const failures = Object.entries(failureInputs).map(([name, messages]) => ({
  name,
  messages,
  section: api.formatToolFailuresSection(api.collectToolFailures(messages)),
}));

const fileInputs = [
  { read: [], modified: [] },
  { read: ["a.txt", "b.txt"], modified: [] },
  { read: [], modified: ["notes.md"] },
  { read: ["src/x.ts"], modified: ["src/y.ts", "src/z.ts"] },
  {
    read: Array.from({ length: 80 }, (_, i) => `dir/file-${String(i).padStart(3, "0")}.txt`),
    modified: Array.from({ length: 5 }, (_, i) => `out/${i}.md`),
  },
  {
    read: Array.from({ length: 200 }, (_, i) => `very/long/path/to/somewhere/deep/file-${i}.txt`),
    modified: Array.from({ length: 200 }, (_, i) => `another/very/long/path/modified-${i}.txt`),
  },
];
const files = fileInputs.map((input) => ({
  ...input,
  section: api.formatFileOperations(input.read, input.modified),
}));

const sized = (n, size) =>
  Array.from({ length: n }, (_, i) => (i % 2 ? answer("a".repeat(size)) : user("u".repeat(size))));
const ratioInputs = [
  { name: "empty", messages: [], contextWindow: 100_000 },
  { name: "small messages", messages: sized(10, 200), contextWindow: 100_000 },
  { name: "large messages", messages: sized(4, 40_000), contextWindow: 100_000 },
  { name: "huge messages", messages: sized(2, 200_000), contextWindow: 100_000 },
  { name: "medium messages, small window", messages: sized(6, 4_000), contextWindow: 8_000 },
];
const ratios = ratioInputs.map((input) => ({
  ...input,
  ratio: api.computeAdaptiveChunkRatio(input.messages, input.contextWindow),
}));

const planInputs = [
  {
    name: "fits",
    messagesToSummarize: sized(6, 2_000),
    turnPrefixMessages: [],
    tokensBefore: 10_000,
    contextWindowTokens: 100_000,
    maxHistoryShare: 0.5,
  },
  {
    name: "kept part over the share",
    messagesToSummarize: sized(8, 40_000),
    turnPrefixMessages: [],
    tokensBefore: 190_000,
    contextWindowTokens: 100_000,
    maxHistoryShare: 0.5,
  },
  {
    name: "tool groups stay whole",
    messagesToSummarize: [
      user("u".repeat(30_000)),
      call("c1", "read"),
      ok("c1", "read", "r".repeat(60_000)),
      answer("a".repeat(30_000)),
      user("u".repeat(30_000)),
      answer("a".repeat(30_000)),
    ],
    turnPrefixMessages: [user("p".repeat(1_000))],
    tokensBefore: 150_000,
    contextWindowTokens: 40_000,
    maxHistoryShare: 0.3,
  },
];
const plans = planInputs.map((input) => {
  const plan = buildHistoryPrunePlan({ ...input, parts: 2 });
  return {
    ...input,
    pruned: plan.pruned !== undefined,
    keptIndexes: (plan.pruned?.messages ?? input.messagesToSummarize).map((message) =>
      input.messagesToSummarize.indexOf(message),
    ),
    droppedIndexes: (plan.pruned?.droppedMessagesList ?? []).map((message) =>
      input.messagesToSummarize.indexOf(message),
    ),
  };
});

fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify({ openclaw: "2026.9.6", failures, files, ratios, plans })}\n`);
console.log(
  `wrote ${failures.length} failure sets, ${files.length} file lists, ${ratios.length} ratios, ${plans.length} plans to ${out}`,
);
