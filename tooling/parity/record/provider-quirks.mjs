// Records OpenClaw 2026.9.6's provider-quirk sanitizers for turn-pipeline's provider-quirks.ts:
// `validateAnthropicTurns`, `validateGeminiTurns`, `sanitizeGoogleAssistantFirstOrdering` on a fixed set of
// message histories, and `resolveEmbeddedAttemptBasePrompt` (the Anthropic refusal magic-string scrub) on a
// fixed set of prompts and providers. Timestamps of inserted messages are normalised to 0.
//
// Run (manual; needs Node 24 and the unpacked package, see ../README.md), from the repo root:
//   OPENCLAW_DIST=/tmp/oc-env/openclaw/package/dist NODE_PATH=/tmp/oc-env/deps/node_modules \
//   /tmp/oc-env/node24/package/bin/node tooling/parity/record/provider-quirks.mjs
// Writes packages/turn-pipeline/fixtures/openclaw/provider-quirks/sanitizers.json.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { get } from "../load-openclaw.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(
  here,
  "../../../packages/turn-pipeline/fixtures/openclaw/provider-quirks/sanitizers.json",
);

const validateAnthropicTurns = await get("validateAnthropicTurns");
const validateGeminiTurns = await get("validateGeminiTurns");
const sanitizeGoogleAssistantFirstOrdering = await get("sanitizeGoogleAssistantFirstOrdering");
const resolveEmbeddedAttemptBasePrompt = await get("resolveEmbeddedAttemptBasePrompt");

const user = (text, timestamp = 1) => ({ role: "user", content: text, timestamp });
const userBlocks = (text, timestamp = 1) => ({ role: "user", content: [{ type: "text", text }], timestamp });
const assistant = (content, extra = {}) => ({
  role: "assistant",
  content,
  stopReason: "stop",
  timestamp: 2,
  ...extra,
});
const text = (t) => ({ type: "text", text: t });
const call = (id, name = "read") => ({ type: "toolCall", id, name, arguments: { path: "a.txt" } });
const result = (id, name = "read", t = "ok") => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [text(t)],
  isError: false,
  timestamp: 3,
});

const histories = {
  alternating: [user("hi"), assistant([text("hello")]), user("again"), assistant([text("ok")])],
  "two users in a row": [user("first"), userBlocks("second", 5), assistant([text("ok")])],
  "three users, mixed content": [user("a", 1), userBlocks("b", 2), user("c", 3), assistant([text("ok")])],
  "two assistants in a row": [
    user("hi"),
    assistant([text("one")], { usage: { input: 1 } }),
    assistant([text("two")], { stopReason: "length", usage: { input: 2 } }),
  ],
  "assistant first": [assistant([text("I start")]), user("then me")],
  "bootstrap already there": [user("(session bootstrap)"), assistant([text("I start")])],
  "answered tool call": [
    user("read it"),
    assistant([call("c1")], { stopReason: "toolUse" }),
    result("c1"),
    assistant([text("done")]),
  ],
  "dangling tool call": [
    user("read it"),
    assistant([text("reading"), call("c1")], { stopReason: "toolUse" }),
    user("never mind"),
  ],
  "dangling only call": [
    user("read it"),
    assistant([call("c1")], { stopReason: "toolUse" }),
    user("never mind"),
  ],
  "dangling call of an aborted turn": [
    user("read it"),
    assistant([call("c1")], { stopReason: "aborted" }),
    user("again"),
  ],
  "one of two calls answered": [
    user("read both"),
    assistant([call("c1"), call("c2")], { stopReason: "toolUse" }),
    result("c1"),
    assistant([text("half")]),
  ],
  "thinking turn with a dangling call": [
    user("think"),
    assistant([{ type: "thinking", thinking: "hmm", thinkingSignature: "sig" }, call("c1")], {
      stopReason: "toolUse",
    }),
    user("next"),
  ],
  "thinking turn answered": [
    user("think"),
    assistant([{ type: "thinking", thinking: "hmm", thinkingSignature: "sig" }, call("c1")], {
      stopReason: "toolUse",
    }),
    result("c1"),
    assistant([text("ok")]),
  ],
  "result after the next assistant": [
    user("x"),
    assistant([call("c1")], { stopReason: "toolUse" }),
    assistant([text("between")]),
    result("c1"),
  ],
  empty: [],
};

const normalise = (messages) =>
  JSON.parse(
    JSON.stringify(messages, (key, value) =>
      key === "timestamp" && typeof value === "number" && value > 1e12 ? 0 : value,
    ),
  );

const cases = Object.entries(histories).map(([name, messages]) => ({
  name,
  input: messages,
  validateAnthropicTurns: normalise(validateAnthropicTurns(structuredClone(messages))),
  validateGeminiTurns: normalise(validateGeminiTurns(structuredClone(messages))),
  sanitizeGoogleAssistantFirstOrdering: normalise(
    sanitizeGoogleAssistantFirstOrdering(structuredClone(messages)),
  ),
}));

const prompts = [
  "hello",
  "ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL",
  "say ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL twice: ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL",
  "anthropic_magic_string_trigger_refusal (lower case)",
  "ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL_1FAEFB6177B4672DEE07F9D3AFC62588CCD2631EDCF22E8CCC1FB35B501C9C86",
];
const scrub = [];
for (const provider of ["anthropic", "openai", "google", "Anthropic"]) {
  for (const prompt of prompts)
    scrub.push({ provider, prompt, sent: resolveEmbeddedAttemptBasePrompt({ provider, prompt }) });
}

fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify({ openclaw: "2026.9.6", cases, scrub }, null, 2)}\n`);
console.log(`wrote ${cases.length} histories and ${scrub.length} prompts to ${out}`);
