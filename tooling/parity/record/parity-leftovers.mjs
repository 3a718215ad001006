// Records the "parity leftovers" fixtures (issue 23) from the real OpenClaw 2026.9.6 functions:
// the is*ErrorMessage predicates and isCloudCodeAssistFormatError (over the messages of the recorded
// error-classify corpus), buildGroupHistoryKey, resolveSessionKey (message contexts, global and
// per-sender scope), resolvePromptHistoryLimit, resolveAgentIdFromSessionKey (values and errors) and
// stripInlineDirectiveTagsForDisplay.
//
// Run by hand (Node 24, the unpacked package; see ../README.md and runtime-resolver.mjs), from the repo root:
//   OPENCLAW_DIST=/tmp/oc-env/openclaw/package/dist NODE_PATH=/tmp/oc-env/deps/node_modules \
//   OPENCLAW_NODE_MODULES=/tmp/oc-env/deps/node_modules \
//   /tmp/oc-env/node24/package/bin/node tooling/parity/record/parity-leftovers.mjs
// Writes packages/runtime-resolver/fixtures/openclaw/leftovers.json and
// packages/turn-pipeline/fixtures/openclaw/streaming/directive-display.json. No plugin registry is loaded,
// so resolveSessionKey sees only the bundled channel ids (recorded as `groupSurfaces`).
import fs from "node:fs";
import { registerHooks } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DIST, get } from "../load-openclaw.mjs";

const depsDir = process.env.OPENCLAW_NODE_MODULES ?? path.resolve(DIST, "../node_modules/node_modules");
registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (
        (error?.code !== "ERR_MODULE_NOT_FOUND" && error?.code !== "MODULE_NOT_FOUND") ||
        /^(\.|\/|node:|file:)/.test(specifier)
      )
        throw error;
      return nextResolve(specifier, {
        ...context,
        parentURL: pathToFileURL(path.join(depsDir, "resolve-from.mjs")).href,
      });
    }
  },
});

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");
const resolverFixtures = path.join(repo, "packages/runtime-resolver/fixtures/openclaw");
const streamingFixtures = path.join(repo, "packages/turn-pipeline/fixtures/openclaw/streaming");

function attempt(fn) {
  try {
    return { value: fn() ?? null };
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
}
const clean = (value) => JSON.parse(JSON.stringify(value ?? null));
// Files stay under biome's 1 MiB limit once formatted: a large fixture is split into
// <name>.part-<n>.json files, which the packages' test loaders read back in order.
const PART_BYTES = 600_000;
function write(dir, name, extra, cases) {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync(dir))
    if (f === `${name}.json` || f.startsWith(`${name}.part-`)) fs.rmSync(path.join(dir, f));
  const parts = [[]];
  let size = 0;
  for (const c of cases) {
    const bytes = JSON.stringify(c, null, 2).length;
    if (size + bytes > PART_BYTES && parts.at(-1).length > 0) {
      parts.push([]);
      size = 0;
    }
    parts.at(-1).push(c);
    size += bytes;
  }
  parts.forEach((part, index) => {
    const file = path.join(dir, parts.length === 1 ? `${name}.json` : `${name}.part-${index + 1}.json`);
    fs.writeFileSync(
      file,
      `${JSON.stringify({ source: "openclaw@2026.9.6", ...extra, cases: part }, null, 2)}\n`,
    );
  });
  console.log(`${name}: ${cases.length} cases in ${parts.length} file(s)`);
}

const cases = [];

// --- error predicates: every distinct message of the error-classify corpus.
const messages = new Set();
for (const f of fs.readdirSync(resolverFixtures).filter((f) => f.startsWith("error-classify"))) {
  for (const c of JSON.parse(fs.readFileSync(path.join(resolverFixtures, f), "utf8")).cases)
    if (c.fn === "isContextOverflowError" && typeof c.input === "string") messages.add(c.input);
}
for (const extra of [
  "",
  "   ",
  "image dimensions exceed max allowed size for many-image requests: 8000 pixels; tool_use_id mismatch",
  "Invalid request format",
  "messages.3: tool_use.id not found",
])
  messages.add(extra);
const predicateNames = [
  "isRateLimitErrorMessage",
  "isTimeoutErrorMessage",
  "isBillingErrorMessage",
  "isAuthErrorMessage",
  "isAuthPermanentErrorMessage",
  "isOverloadedErrorMessage",
  "isCloudCodeAssistFormatError",
];
// One case per message, with every predicate's answer (compact: about 1,100 messages).
const predicates = await Promise.all(predicateNames.map((name) => get(name)));
for (const message of messages)
  cases.push({
    fn: "errorPredicates",
    input: message,
    output: Object.fromEntries(predicateNames.map((name, i) => [name, Boolean(predicates[i](message))])),
  });

// --- buildGroupHistoryKey.
const buildGroupHistoryKey = await get("buildGroupHistoryKey");
const groupInputs = [];
for (const channel of ["telegram", " Discord ", "signal", "matrix", "", undefined, "WhatsApp"])
  for (const accountId of [undefined, "", "Work Acct", "__proto__", "default"])
    for (const peerKind of ["group", "channel", "direct"])
      for (const peerId of ["-100123", "AbC+Def/Gh==", "!Room:Example.org", "  ", undefined])
        groupInputs.push({ channel, accountId, peerKind, peerId });
for (const input of groupInputs)
  cases.push({
    fn: "buildGroupHistoryKey",
    input: clean(input),
    output: clean(attempt(() => buildGroupHistoryKey(input))),
  });

// --- resolveSessionKey(scope, ctx, mainKey, agentId).
const resolveSessionKey = await get("resolveSessionKey", "session-key-");
const contexts = [
  {},
  { From: "+1 (555) 123-4567" },
  { From: "whatsapp:+15551234567" },
  { From: "telegram:12345" },
  { From: "abc" },
  { From: "telegram:group:-100123", ChatType: "group" },
  { From: "telegram:-100123", ChatType: "group" },
  { From: "discord:channel:987", ChatType: "channel" },
  { From: "discord:987", ChatType: "channel", Provider: "discord" },
  { From: "signal:group:AbC+Def/Gh==", ChatType: "group" },
  { From: "matrix:channel:!Room:Example.org", ChatType: "channel" },
  { From: "slack:C123", ChatType: "channel", To: "channel:C999" },
  { From: "slack:C123", ChatType: "channel", OriginatingTo: "slack:channel:C777" },
  { From: "unknownsurface:group:42", ChatType: "group" },
  { From: "unknownsurface:group:42", ChatType: "group", Provider: "Telegram" },
  { From: "12345", ChatType: "group", Provider: "telegram", To: "chat:-100555" },
  { From: "12345", ChatType: "direct", Provider: "telegram" },
  { From: "webchat:group:room-1", ChatType: "group" },
  { From: "group:only" },
  { From: "x:channel:y" },
  { SessionKey: "  Agent:Ops:Telegram:Direct:ABC  ", From: "+1555" },
  { SessionKey: "signal:group:AbC+Def/Gh==" },
  { SessionKey: "   ", From: "+1555" },
];
for (const scope of ["global", "per-sender", undefined])
  for (const ctx of contexts)
    for (const [mainKey, agentId] of [
      [undefined, "main"],
      ["Work", "Ops Team"],
      [undefined, undefined],
      ["main", "  "],
    ]) {
      const input = { scope, ctx, mainKey, agentId };
      cases.push({
        fn: "resolveSessionKey",
        input: clean(input),
        output: clean(attempt(() => resolveSessionKey(scope, ctx, mainKey, agentId))),
      });
    }

// --- resolvePromptHistoryLimit(configured, fallback?).
const resolvePromptHistoryLimit = await get("resolvePromptHistoryLimit");
const limitValues = [
  undefined,
  null,
  0,
  1,
  10,
  49.9,
  50,
  199,
  200,
  201,
  1000,
  -1,
  -0.5,
  3.7,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER - 1,
  Number.MAX_SAFE_INTEGER + 2,
  "20",
  true,
];
const encode = (v) =>
  typeof v === "number" && !Number.isFinite(v)
    ? { number: String(v) }
    : v === undefined
      ? { undefined: true }
      : v;
for (const configured of limitValues)
  for (const fallback of [undefined, 10, 500, -3, Number.NaN, 7.9])
    cases.push({
      fn: "resolvePromptHistoryLimit",
      input: { configured: encode(configured), fallback: encode(fallback) },
      output: resolvePromptHistoryLimit(configured, ...(fallback === undefined ? [] : [fallback])),
    });

// --- resolveAgentIdFromSessionKey(sessionKey, configuredDefaultAgentId).
const resolveAgentIdFromSessionKey = await get("resolveAgentIdFromSessionKey");
for (const sessionKey of [
  "agent:Ops:main",
  "AGENT:My Agent!:telegram:direct:1",
  "agent:",
  "agent:ops",
  "agent:ops:",
  "agent::main",
  "agent:ops::x",
  "telegram:direct:1",
  "global",
  "",
  "   ",
  undefined,
  null,
])
  for (const fallback of [undefined, "", "  ", "Work Team"])
    cases.push({
      fn: "resolveAgentIdFromSessionKey",
      input: clean({ sessionKey, fallback }),
      output: clean(attempt(() => resolveAgentIdFromSessionKey(sessionKey, fallback))),
    });

write(resolverFixtures, "leftovers", { groupSurfaces: await groupSurfaces() }, cases);

async function groupSurfaces() {
  const list = await get("listDeliverableMessageChannels");
  return [...new Set([...list(), "webchat"])].sort();
}

// --- stripInlineDirectiveTagsForDisplay.
const display = await get("stripInlineDirectiveTagsForDisplay");
const texts = [
  "",
  "plain",
  "[[reply_to_current]] hello",
  "hello [[reply_to_current]]",
  "a[[audio_as_voice]]b",
  "  [[ reply_to : 123 ]]  padded  ",
  "line one\n[[reply_to:abc]]\nline two",
  "`[[reply_to_current]]` kept",
  "```\n[[audio_as_voice]]\n```\noutside [[audio_as_voice]]",
  "[[reply_to_current]][[audio_as_voice]]",
  "[[reply_to:]]",
  "[[reply_to: id with spaces ]] x",
  "[[REPLY_TO_CURRENT]] caps",
  "[[reply_to_current] not closed",
  "text  [[audio_as_voice]]  text",
  "~~~\n[[reply_to_current]]\n~~~",
  "[[reply_to:a\nb]]",
  "tab\t[[audio_as_voice]]\ttab",
  "[[ audio_as_voice ]]",
  "x [[unknown_tag]] y",
];
write(
  streamingFixtures,
  "directive-display",
  {},
  texts.map((input) => ({ fn: "stripInlineDirectiveTagsForDisplay", input, output: display(input) })),
);
