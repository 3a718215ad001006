// Records OpenClaw 2026.9.6's cache-TTL context pruning for turn-pipeline's context-pruning.ts:
// `resolveCacheTtlPruningSettings` on a set of configs (ttl, placeholder, hard clear, which tool names are
// prunable) and `pruneExpiredCacheTtlToolResults` on a set of histories (within and past the TTL, small and
// large contexts, denied tools, recent turns, images, a second request replaying earlier trims).
//
// Run (manual; needs Node 24 and the unpacked package, see ../README.md), from the repo root:
//   OPENCLAW_DIST=/tmp/oc-env/openclaw/package/dist /tmp/oc-env/node24/package/bin/node tooling/parity/record/context-pruning.mjs
// Writes packages/turn-pipeline/fixtures/openclaw/context-pruning/cache-ttl.json.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { get } from "../load-openclaw.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(
  here,
  "../../../packages/turn-pipeline/fixtures/openclaw/context-pruning/cache-ttl.json",
);

const resolveSettings = await get("resolveCacheTtlPruningSettings");
const prune = await get("pruneExpiredCacheTtlToolResults");
const createState = await get("createToolResultPromptProjectionState");

const toolNames = ["read", "exec", "web_fetch", "memory_search", "Read", "browser_snapshot"];
const configs = [
  { mode: "cache-ttl" },
  { mode: "cache-ttl", ttl: "1h" },
  { mode: "cache-ttl", ttl: "30" },
  { mode: "cache-ttl", ttl: "90s" },
  { mode: "cache-ttl", ttl: "garbage" },
  { mode: "cache-ttl", hardClear: { enabled: false, placeholder: "  [gone]  " } },
  { mode: "cache-ttl", hardClear: { placeholder: "   " } },
  { mode: "cache-ttl", tools: { deny: ["exec", "web_*"] } },
  { mode: "cache-ttl", tools: { allow: ["read", "memory_*"], deny: ["memory_get"] } },
  { mode: "off" },
  {},
];
const settingsCases = configs.map((config) => {
  const settings = resolveSettings(config);
  return {
    config,
    settings: settings
      ? {
          ttlMs: settings.ttlMs,
          hardClear: settings.hardClear,
          placeholder: settings.placeholder,
          prunable: Object.fromEntries(toolNames.map((name) => [name, settings.isToolPrunable(name)])),
        }
      : null,
  };
});

const NOW = 1_800_000_000_000;
const text = (t) => ({ type: "text", text: t });
const user = (t) => ({ role: "user", content: t, timestamp: 1 });
const call = (id, name) => ({
  role: "assistant",
  content: [{ type: "toolCall", id, name, arguments: { path: `${id}.txt` } }],
  stopReason: "toolUse",
  timestamp: 2,
});
const answer = (t) => ({ role: "assistant", content: [text(t)], stopReason: "stop", timestamp: 2 });
const result = (id, name, body) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [text(body)],
  isError: false,
  timestamp: 3,
});
const big = (n, tag) => `${tag}-HEAD ${"x".repeat(Math.max(0, n - 20))} ${tag}-TAIL`;

const oneOld = (size, name = "read") => [
  user("go"),
  call("c1", name),
  result("c1", name, big(size, "c1")),
  answer("a1"),
  user("u2"),
  answer("a2"),
  user("u3"),
  answer("a3"),
  user("u4"),
];
const manyOld = (count, size) => {
  // Results under 4000 chars are not soft-trimmed, so enough of them reach the 50000-char hard-clear floor.
  const messages = [user("go")];
  for (let i = 1; i <= count; i++)
    messages.push(call(`c${i}`, "read"), result(`c${i}`, "read", big(size, `c${i}`)));
  messages.push(answer("a1"), user("u2"), answer("a2"), user("u3"), answer("a3"), user("u4"));
  return messages;
};

const histories = [
  {
    name: "past the TTL, one large old result",
    messages: oneOld(12_000),
    contextWindowTokens: 8_000,
    lastTouchAgoMs: 600_000,
  },
  { name: "within the TTL", messages: oneOld(12_000), contextWindowTokens: 8_000, lastTouchAgoMs: 60_000 },
  { name: "never touched", messages: oneOld(12_000), contextWindowTokens: 8_000, lastTouchAgoMs: null },
  {
    name: "small context share",
    messages: oneOld(12_000),
    contextWindowTokens: 200_000,
    lastTouchAgoMs: 600_000,
  },
  {
    name: "result under 4000 chars",
    messages: [...oneOld(3_000), ...[]],
    contextWindowTokens: 2_000,
    lastTouchAgoMs: 600_000,
  },
  {
    name: "denied tool",
    messages: oneOld(12_000, "exec"),
    contextWindowTokens: 8_000,
    lastTouchAgoMs: 600_000,
    config: { mode: "cache-ttl", tools: { deny: ["exec"] } },
  },
  {
    name: "in the last three assistant turns",
    messages: [
      user("go"),
      answer("a0"),
      user("u1"),
      call("c1", "read"),
      result("c1", "read", big(12_000, "c1")),
      answer("a1"),
      user("u2"),
      answer("a2"),
      user("u3"),
    ],
    contextWindowTokens: 8_000,
    lastTouchAgoMs: 600_000,
  },
  {
    name: "many results: hard clear",
    messages: manyOld(14, 3_900),
    contextWindowTokens: 1_000,
    lastTouchAgoMs: 600_000,
  },
  {
    name: "many results, hard clear off",
    messages: manyOld(14, 3_900),
    contextWindowTokens: 1_000,
    lastTouchAgoMs: 600_000,
    config: { mode: "cache-ttl", hardClear: { enabled: false } },
  },
  {
    name: "image result",
    messages: [
      user("go"),
      call("c1", "read"),
      {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "read",
        content: [text("see image"), { type: "image", data: "AAAA", mimeType: "image/png" }],
        isError: false,
        timestamp: 3,
      },
      answer("a1"),
      user("u2"),
      answer("a2"),
      user("u3"),
      answer("a3"),
      user("u4"),
    ],
    contextWindowTokens: 5_000,
    lastTouchAgoMs: 600_000,
  },
];

const cases = histories.map((history) => {
  const settings = resolveSettings(history.config ?? { mode: "cache-ttl" });
  const projectionState = createState();
  const run = (lastTouchAgoMs) => {
    let pruned = false;
    const sent = prune({
      messages: structuredClone(history.messages),
      settings,
      contextWindowTokens: history.contextWindowTokens,
      lastCacheTouchAt: lastTouchAgoMs === null ? null : NOW - lastTouchAgoMs,
      now: NOW,
      projectionState,
      pruneNewRounds: true,
      onPruned: () => {
        pruned = true;
      },
    });
    // A message sent as it was given is recorded as "=" (keeps the fixture small).
    const given = JSON.stringify(history.messages.map((message) => message));
    const sentJson = JSON.parse(JSON.stringify(sent));
    const inputs = JSON.parse(given);
    return {
      sent: sentJson.map((message, index) =>
        JSON.stringify(message) === JSON.stringify(inputs[index]) ? "=" : message,
      ),
      pruned,
    };
  };
  const first = run(history.lastTouchAgoMs);
  // A second request right after (within the TTL): earlier trims are replayed.
  const second = run(1_000);
  return { ...history, first, second };
});

fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(
  out,
  `${JSON.stringify({ openclaw: "2026.9.6", now: NOW, settings: settingsCases, cases })}\n`,
);
console.log(`wrote ${settingsCases.length} configs and ${cases.length} histories to ${out}`);
