// Records the runtime-resolver parity fixtures from the real OpenClaw 2026.9.6 functions:
// session keys, model refs and candidate chains, error classification (a corpus scraped from
// pi-ai's and OpenClaw's sources and docs plus generated variants), thinking levels and their
// fallback, auth-profile cooldown sequences and order, and queue settings.
//
// Run by hand (Node 24, the unpacked package; see ../README.md), from the repo root:
//   OPENCLAW_DIST=/work/openclaw-env/openclaw/package/dist NODE_PATH=/work/openclaw-env/deps/node_modules \
//   PI_AI_DIST=node_modules/.pnpm/@earendil-works+pi-ai@0.87.1_ws@8.23.0_zod@4.6.7/node_modules/@earendil-works/pi-ai/dist \
//   /work/openclaw-env/node24/package/bin/node tooling/parity/record/runtime-resolver.mjs
// Writes packages/runtime-resolver/fixtures/openclaw/*.json. Inputs are deterministic (seeded).
// NODE_PATH serves OpenClaw's CommonJS requires (its logger), the hook below its ESM imports.
import fs from "node:fs";
import { registerHooks } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DIST, get } from "../load-openclaw.mjs";
import { seededRandom } from "../seeded-random.mjs";

// The package's runtime dependencies live beside it (openclaw-behaviors §15). When the unpacked
// package already had a node_modules folder the symlink lands one level down, so bare imports that
// fail are retried from there (OPENCLAW_NODE_MODULES overrides the folder).
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
const OUT = path.resolve(here, "../../../packages/runtime-resolver/fixtures/openclaw");
const PI_AI_DIST = process.env.PI_AI_DIST;
fs.mkdirSync(OUT, { recursive: true });

// Files stay under biome's 1 MiB limit once formatted: a large fixture is split into
// <name>.part-<n>.json files, which the package's test loader reads back in order.
const PART_BYTES = 600_000;
function write(name, cases) {
  for (const f of fs.readdirSync(OUT))
    if (f === `${name}.json` || f.startsWith(`${name}.part-`)) fs.rmSync(path.join(OUT, f));
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
    const file = path.join(OUT, parts.length === 1 ? `${name}.json` : `${name}.part-${index + 1}.json`);
    fs.writeFileSync(file, `${JSON.stringify({ source: "openclaw@2026.9.6", cases: part }, null, 2)}\n`);
  });
  console.log(`${name}: ${cases.length} cases in ${parts.length} file(s)`);
}

const pick = (r, list) => list[Math.floor(r() * list.length)];
const maybe = (r, p, value) => (r() < p ? value : undefined);
function attempt(fn) {
  try {
    return { value: fn() ?? null };
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
}
const clean = (value) => JSON.parse(JSON.stringify(value ?? null));

// ---------------------------------------------------------------------------
// 1. Session keys.
{
  const normalizeAgentId = await get("normalizeAgentId");
  const isValidAgentId = await get("isValidAgentId");
  const parse = await get("parseAgentSessionKey");
  const classify = await get("classifySessionKeyShape");
  const buildPeer = await get("buildAgentPeerSessionKey");
  const buildMain = await get("buildAgentMainSessionKey");
  const toStore = await get("toAgentStoreSessionKey");
  const toRequest = await get("toAgentRequestSessionKey");
  const threadSuffix = await get("parseThreadSessionSuffix");
  const threadKeys = await get("resolveThreadSessionKeys");
  const depth = await get("getSubagentDepth");
  const isCron = await get("isCronSessionKey");
  const cronRun = await get("parseCronRunScopeSuffix");
  const agentFromKey = await get("resolveAgentIdFromSessionKey");
  const isSubagent = await get("isSubagentSessionKey");
  const isAcp = await get("isAcpSessionKey");
  const r = seededRandom(1);
  const cases = [];

  const ids = [
    "main",
    "Main",
    " ops ",
    "My Agent!",
    "../../../etc/passwd",
    "",
    "---",
    "-lead",
    "_x",
    "a".repeat(70),
    "ÄgentÜ",
    "work_bot-2",
    "a b c",
    "UPPER",
    "x:y",
    "0",
    "agent.name",
    "  ",
    "é",
    "a--b",
    "-a-",
    "__proto__",
  ];
  const alphabet = ["a", "B", "z", "0", "9", "-", "_", " ", "!", ".", "/", ":", "é", "中", "\t", "A"];
  for (let i = 0; i < 80; i++) {
    let s = "";
    const n = 1 + Math.floor(r() * 12);
    for (let j = 0; j < n; j++) s += pick(r, alphabet);
    ids.push(s);
  }
  ids.push("b".repeat(64), `${"c".repeat(63)}!x`, `x${"-".repeat(70)}y`);
  for (const id of ids) {
    cases.push({ fn: "normalizeAgentId", input: id, output: normalizeAgentId(id) });
    cases.push({ fn: "isValidAgentId", input: id, output: isValidAgentId(id) });
  }

  const keys = [
    "AGENT:Main:Hook:Webhook:42",
    "agent:main",
    "agent::broken",
    "agent:main::x",
    "main",
    "subagent:x",
    "",
    "  ",
    "agent:ops:telegram:group:-100123:topic:7",
    "agent:main:signal:group:AbCdEf==",
    "agent:main:matrix:channel:!Room:Server.Org",
    "agent:main:matrix:channel:!Room:Server:thread:$EvT",
    "agent:main:cron:daily:run:ABC",
    "agent:main:cron:daily",
    "agent:main:cron:daily:run:abc:extra",
    "agent:main:subagent:a:subagent:b",
    "agent:main:acp:x",
    "global",
    "unknown",
    "Agent:Ops:Slack:Channel:C123:Thread:1700.1",
    "agent: spaced :rest",
    "agent:x:telegram:direct:123",
    "agent:x:telegram:dm:123",
    "telegram:group:1",
    "cron:job",
    "agent:main:discord:acct:direct:U1:thread:T2",
    "agent:main:SIGNAL:GROUP: MiXeD :thread:X",
    "agent:a:agent:b:c",
    "agent:main:thread:",
    "x:thread:Y:thread:Z",
  ];
  const segs = [
    "agent",
    "Main",
    "ops",
    "",
    " ",
    "telegram",
    "signal",
    "matrix",
    "group",
    "channel",
    "direct",
    "dm",
    "thread",
    "topic",
    "cron",
    "run",
    "subagent",
    "hook",
    "acp",
    "ABC",
    "!RoomId",
    "Mixed",
    "123",
    " spaced ",
    "Thread",
  ];
  for (let i = 0; i < 260; i++) {
    const n = 1 + Math.floor(r() * 7);
    const parts = [];
    for (let j = 0; j < n; j++) parts.push(pick(r, segs));
    const prefix = pick(r, [
      "agent:main:",
      "AGENT:Ops:",
      "",
      "agent:",
      " agent:x:",
      "agent:main:matrix:group:",
    ]);
    keys.push(prefix + parts.join(":"));
  }
  for (const key of keys) {
    cases.push({ fn: "parseAgentSessionKey", input: key, output: clean(parse(key)) });
    cases.push({ fn: "classifySessionKeyShape", input: key, output: classify(key) });
    cases.push({ fn: "toAgentRequestSessionKey", input: key, output: toRequest(key) ?? null });
    cases.push({ fn: "parseThreadSessionSuffix", input: key, output: clean(threadSuffix(key)) });
    cases.push({ fn: "getSubagentDepth", input: key, output: depth(key) });
    cases.push({ fn: "isCronSessionKey", input: key, output: isCron(key) });
    cases.push({ fn: "isSubagentSessionKey", input: key, output: isSubagent(key) });
    cases.push({ fn: "isAcpSessionKey", input: key, output: isAcp(key) });
    cases.push({ fn: "parseCronRunScopeSuffix", input: key, output: clean(cronRun(key)) });
    const fallback = pick(r, ["ops", "", "Main", undefined]);
    cases.push({
      fn: "resolveAgentIdFromSessionKey",
      input: { key, defaultAgentId: fallback ?? null },
      output: attempt(() => agentFromKey(key, fallback)),
    });
    const store = {
      agentId: pick(r, ["main", "Ops", "x y"]),
      requestKey: key,
      mainKey: pick(r, [undefined, "Home", ""]),
    };
    cases.push({ fn: "toAgentStoreSessionKey", input: clean(store), output: toStore(store) });
  }

  const links = { alice: ["telegram:111", "discord:222", "333"], " Bob ": ["SLACK:U9"], empty: [] };
  for (let i = 0; i < 240; i++) {
    const params = {
      agentId: pick(r, ["main", "Ops", "My Agent", ""]),
      mainKey: maybe(r, 0.4, pick(r, ["main", "Home", " "])),
      channel: pick(r, ["telegram", "Discord", "slack", "signal", "matrix", "", "WhatsApp"]),
      accountId: maybe(r, 0.5, pick(r, ["acct1", "Work Account", "", "__proto__"])),
      peerKind: maybe(r, 0.8, pick(r, ["direct", "group", "channel"])),
      peerId: maybe(
        r,
        0.9,
        pick(r, ["111", "222", "333", "U9", "AbC==", "!Room:Srv", " ", "Mixed-Case", "-100:topic:5"]),
      ),
      dmScope: maybe(r, 0.8, pick(r, ["main", "per-peer", "per-channel-peer", "per-account-channel-peer"])),
      groupScope: maybe(r, 0.3, pick(r, ["main", "per-group"])),
      identityLinks: maybe(r, 0.5, links),
    };
    cases.push({ fn: "buildAgentPeerSessionKey", input: clean(params), output: buildPeer(params) });
  }
  for (const agentId of ["main", "Ops", "", "x y"]) {
    for (const mainKey of [undefined, "", "Home", " work "]) {
      cases.push({
        fn: "buildAgentMainSessionKey",
        input: clean({ agentId, mainKey }),
        output: buildMain({ agentId, mainKey }),
      });
    }
  }
  for (const threadId of ["", " ", "T1", "ThReAd-9", "1700.123"]) {
    for (const useSuffix of [undefined, true, false]) {
      const params = { baseSessionKey: "agent:main:slack:channel:c1", threadId, useSuffix };
      cases.push({ fn: "resolveThreadSessionKeys", input: clean(params), output: clean(threadKeys(params)) });
    }
  }
  write("session-key", cases);
}

// ---------------------------------------------------------------------------
// 2. Error classification: corpus from sources and docs, plus generated variants.
function scrapePiAi() {
  if (!PI_AI_DIST) return [];
  const out = new Set();
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith(".js")) {
        const src = fs.readFileSync(file, "utf8");
        for (const m of src.matchAll(
          /(?:new Error|errorMessage\s*[:=])\s*\(?\s*(["'`])((?:(?!\1).){6,240})\1/g,
        )) {
          out.add(m[2].replace(/\$\{[^}]*\}/g, "429"));
        }
        for (const m of src.matchAll(/^\s*\* - [^:]+: (?:"(.+)"|`(.+)`)\s*(?:or .*)?$/gm))
          out.add((m[1] ?? m[2]).replaceAll('\\"', '"'));
      }
    }
  };
  walk(PI_AI_DIST);
  return [...out];
}
function scrapeOpenClawDocs() {
  const docs = path.resolve(DIST, "../docs");
  const out = new Set();
  const wanted =
    /(error|limit|exceed|denied|invalid|quota|overload|timeout|timed out|unauthori|forbidden|billing|credit|balance|too long|too many|not found|expired|revoked|unavailable|\b[45]\d\d\b)/i;
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith(".md")) {
        const src = fs.readFileSync(file, "utf8");
        for (const m of src.matchAll(/`([^`\n]{12,200})`/g)) {
          const text = m[1];
          if (wanted.test(text) && !/^(openclaw|pnpm|npm|cd|export|curl|\/|\.|--|\{%)/i.test(text.trim()))
            out.add(text);
        }
      }
    }
  };
  walk(docs);
  return [...out].sort();
}
function scrapeOpenClawPatterns() {
  // The literal example messages OpenClaw's own failover code names in comments and user copy.
  const out = new Set();
  for (const f of fs.readdirSync(DIST)) {
    if (
      !/^(classify|message-patterns|failover|redact|embedded-agent-helpers|errors)/.test(f) ||
      !f.endsWith(".mjs")
    )
      continue;
    const src = fs.readFileSync(path.join(DIST, f), "utf8");
    for (const m of src.matchAll(/\* .*?"([^"\n]{10,200})"/g)) out.add(m[1]);
  }
  return [...out];
}
const HAND_WRITTEN = [
  '429: {"message":"Rate limit reached for gpt-4o","type":"rate_limit_error","code":"rate_limit_exceeded"}',
  '429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}',
  '401: {"message":"Incorrect API key provided: sk-abc","code":"invalid_api_key"}',
  '400: {"error":{"message":"This model\'s maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","code":"context_length_exceeded"}}',
  "prompt is too long: 210000 tokens > 200000 maximum",
  '500: {"error":{"message":"boom"}}',
  "terminated",
  "Request was aborted",
  "No API key found for nokey.",
  "No more faux responses queued",
  "429 Too Many Requests",
  "503 Service Unavailable",
  "502 Bad Gateway",
  "504 Gateway Timeout",
  "529 Overloaded",
  '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
  "402 Payment Required",
  "HTTP 402: insufficient credits",
  "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
  "insufficient_quota",
  "You exceeded your current quota, please check your plan and billing details.",
  "RESOURCE_EXHAUSTED",
  "ThrottlingException: Too many tokens, please wait before trying again.",
  "Rate limit exceeded: 30000 tokens per minute (TPM). Limit 30000, requested 45000.",
  "Request too large for gpt-4 in organization org-x on tokens per min (TPM): Limit 10000, Requested 12000.",
  "This request would exceed the rate limit for your organization of 450,000 input tokens per minute.",
  "api key revoked",
  "Your API key has been deactivated",
  "deactivated_workspace",
  "This key has been disabled",
  "Invalid API key",
  "invalid x-api-key",
  "authentication_error: invalid x-api-key",
  "OAuth token refresh failed for anthropic: invalid_grant",
  "Forbidden",
  "403 Forbidden",
  "Permission denied: missing scopes: model.request",
  "The model `gpt-9` does not exist or you do not have access to it.",
  "model_not_found",
  "404 Not Found",
  "Unknown model: foo",
  "No endpoints found for meta/llama",
  "models/gemini-x is not found for API version v1beta",
  "model has been deactivated",
  "ModelNotReadyException",
  "workers_ai quota limit exceeded",
  "Connection error.",
  "fetch failed",
  "socket hang up",
  "ECONNRESET",
  "read ECONNRESET",
  "connect ECONNREFUSED 127.0.0.1:443",
  "getaddrinfo ENOTFOUND api.openai.com",
  "The operation was aborted",
  "Request timed out.",
  "timeout",
  "deadline exceeded",
  "stream disconnected before completion: foo",
  "Anthropic stream ended before message_stop",
  "OpenAI Responses stream ended before a terminal response event",
  "an unknown error occurred",
  "unknown error (no error details in response)",
  "An error occurred while processing your request. You can retry your request, or contact us through our help center at help.openai.com if the error persists. Please include the request ID req_1234567890abc in your message.",
  "Internal Server Error",
  "internal_error",
  '{"type":"error","error":{"type":"api_error","message":"Internal server error"}}',
  "finish_reason: error",
  "Provider finish_reason: network_error",
  "Provider finish_reason: content_filter",
  "tool_use.id: String should match pattern",
  "messages.1.content.0.tool_use_id: unexpected",
  "roles must alternate between user and assistant",
  "Invalid `signature` in `thinking` block",
  "previous_response_id 'resp_1' is invalid",
  "This model does not support assistant message prefill.",
  "image dimensions exceed max allowed size for many-image requests: 2000 pixels",
  "image exceeds 5 MB maximum",
  "This model does not support image input",
  "Reasoning is mandatory for this endpoint and cannot be disabled.",
  "Unsupported value: 'minimal' is not supported with this model. Supported values are: 'low', 'medium', and 'high'.",
  "thinking level xhigh not supported",
  "session not found",
  "No conversation found with session ID: abc",
  "invalid session transcript entry at line 3",
  "certificate has expired",
  "self signed certificate in certificate chain",
  "unable to get local issuer certificate",
  "<!DOCTYPE html><html><body>Bad gateway</body></html>",
  "520 <!DOCTYPE html><html><head><title>Cloudflare</title></head></html>",
  "403 <html><body>Attention Required! | Cloudflare</body></html>",
  "上下文过长",
  "请求过于频繁",
  "余额不足",
  "认证失败",
  "服务过载",
  "网络错误",
  "You have reached your daily usage limit. Try again tomorrow.",
  "weekly usage limit reached",
  "monthly spend limit reached for organization",
  "402 You have exceeded your organization's monthly spend limit. Try again next billing period.",
  "429 Your account has insufficient balance",
  "Your workspace has reached its spending limit",
  "context window too small: minimum is 16000 tokens",
  "summarization failed: context overflow",
  "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
  "422 Unprocessable Entity",
  "400 status code (no body)",
  "413 status code (no body)",
  "400 Bad Request",
  "410 Gone",
  "408 Request Timeout",
  "499 Client Closed Request",
  "522",
  "524 A timeout occurred",
  "HTTP 500",
  "Error: 503 upstream connect error or disconnect/reset before headers",
  "model at capacity",
  "The selected model is at capacity. Please try a different model.",
  "high demand",
  "concurrency limit reached",
  '{"code":1311,"message":"current subscription plan does not include access"}',
  '{"code":1113,"message":"余额不足或无可用资源包"}',
  '{"error":{"code":"InvalidSubscription","message":"no subscription"}}',
  "You're out of extra usage.",
  "credit balance is too low",
  "billing error: please upgrade your plan",
  "Payment required: buy more credits",
  "got 402 from upstream",
  "error code: 402",
];
const BODIES = [
  "rate limit exceeded",
  "Too many requests",
  "Overloaded",
  "insufficient credits",
  "invalid api key",
  "model not found",
  "context length exceeded",
  "prompt is too long",
  "Internal server error",
  "Bad Gateway",
  "quota exceeded",
  "Service Unavailable",
  "Request timed out",
  "Unauthorized",
  "Forbidden",
  "payment required",
  "",
  "something odd happened",
  "Your plan does not include this model",
];
const PREFIXES = [
  "",
  "429 ",
  "402 ",
  "401 ",
  "403 ",
  "404 ",
  "400 ",
  "422 ",
  "500 ",
  "502 ",
  "503 ",
  "529 ",
  "HTTP 429: ",
  "Error: ",
  "error: 500 ",
  "Anthropic API error: ",
];
function generatedMessages() {
  const r = seededRandom(7);
  const out = [];
  for (const p of PREFIXES) for (const b of BODIES) out.push(`${p}${b}`);
  for (let i = 0; i < 150; i++) {
    const body = pick(r, BODIES);
    const type = pick(r, [
      "rate_limit_error",
      "overloaded_error",
      "invalid_request_error",
      "authentication_error",
      "api_error",
      "server_error",
      "not_found_error",
      "permission_error",
      "insufficient_quota",
    ]);
    const shape = pick(r, [
      () => JSON.stringify({ error: { message: body, type } }),
      () => JSON.stringify({ type: "error", error: { type, message: body } }),
      () =>
        JSON.stringify({
          error: {
            code: pick(r, [429, 500, 400, "rate_limit_exceeded", "RESOURCE_EXHAUSTED"]),
            message: body,
            status: pick(r, ["INTERNAL", "UNAVAILABLE", "RESOURCE_EXHAUSTED"]),
          },
        }),
      () => JSON.stringify({ message: body, code: type }),
    ])();
    out.push(`${pick(r, PREFIXES)}${shape}`);
  }
  return out;
}
{
  const classify = await get("classifyFailoverSignal");
  const isOverflow = await get("isContextOverflowError");
  const isLikelyOverflow = await get("isLikelyContextOverflowError");
  const status = await get("resolveFailoverStatus");
  const isCompactionFailure = await get("isCompactionFailureError");
  const messages = [
    ...new Set([
      ...HAND_WRITTEN,
      ...scrapePiAi(),
      ...scrapeOpenClawPatterns(),
      ...scrapeOpenClawDocs(),
      ...generatedMessages(),
    ]),
  ];
  const r = seededRandom(11);
  const cases = [];
  for (const message of messages) {
    cases.push({ fn: "classifyFailoverSignal", input: { message }, output: classify({ message }) ?? null });
    cases.push({ fn: "isContextOverflowError", input: message, output: isOverflow(message) });
    cases.push({ fn: "isLikelyContextOverflowError", input: message, output: isLikelyOverflow(message) });
    cases.push({ fn: "isCompactionFailureError", input: message, output: isCompactionFailure(message) });
    if (r() < 0.5) {
      const signal = {
        message,
        status: pick(r, [
          400,
          401,
          402,
          403,
          404,
          408,
          410,
          413,
          422,
          429,
          499,
          500,
          502,
          503,
          504,
          522,
          529,
          undefined,
        ]),
        provider: maybe(r, 0.4, pick(r, ["openai", "anthropic", "xai", "moonshot", "claude-cli", "google"])),
        code: maybe(
          r,
          0.15,
          pick(r, [
            "RESOURCE_EXHAUSTED",
            "ECONNRESET",
            "UNKNOWN_PARAMETER",
            "deactivated_workspace",
            "overloaded",
            "ETIMEDOUT",
            "CERT_HAS_EXPIRED",
          ]),
        ),
        errorType: maybe(
          r,
          0.15,
          pick(r, ["invalid_request_error", "server_error", "overloaded_error", "other"]),
        ),
      };
      cases.push({
        fn: "classifyFailoverSignal",
        input: clean(signal),
        output: classify(clean(signal)) ?? null,
      });
    }
  }
  for (const s of [
    400, 401, 402, 403, 404, 408, 409, 410, 413, 422, 429, 451, 499, 500, 501, 502, 503, 504, 520, 521, 522,
    524, 529, 599,
  ]) {
    cases.push({
      fn: "classifyFailoverSignal",
      input: { status: s },
      output: classify({ status: s }) ?? null,
    });
  }
  for (const code of [
    "RESOURCE_EXHAUSTED",
    "THROTTLED",
    "ECONNREFUSED",
    "EHOSTDOWN",
    "ERR_STREAM_PREMATURE_CLOSE",
    "UND_ERR_SOCKET",
    "OVERLOADED_ERROR",
    "SELECTED_AUTH_PROFILE_UNAVAILABLE",
    "DEACTIVATED_WORKSPACE",
    "UNKNOWN_PARAMETER",
    "CERT_HAS_EXPIRED",
    "ERR_TLS_CERT_ALTNAME_INVALID",
    "WHATEVER",
  ]) {
    cases.push({ fn: "classifyFailoverSignal", input: { code }, output: classify({ code }) ?? null });
    cases.push({
      fn: "classifyFailoverSignal",
      input: { code, message: "boom" },
      output: classify({ code, message: "boom" }) ?? null,
    });
  }
  for (const reason of [
    "billing",
    "server_error",
    "rate_limit",
    "overloaded",
    "auth",
    "auth_permanent",
    "timeout",
    "tls_certificate",
    "context_overflow",
    "format",
    "model_not_found",
    "session_expired",
    "empty_response",
    "no_error_details",
    "unclassified",
    "unknown",
  ]) {
    cases.push({ fn: "resolveFailoverStatus", input: reason, output: status(reason) ?? null });
  }
  write("error-classify", cases);
}

// ---------------------------------------------------------------------------
// 3. Model refs, aliases and candidate chains.
{
  const parseModelRef = await get("parseModelRef", "model-selection-normalize");
  const modelKey = await get("modelKey", "model-key");
  const split = await get("splitTrailingAuthProfile");
  const buildAliasIndex = await get("buildModelAliasIndex", "model-selection-shared");
  const fromString = await get("resolveModelRefFromString", "model-selection-shared");
  const chain = await get("resolveModelCandidateChain", "model-fallback-candidates-t");
  const r = seededRandom(3);
  const cases = [];
  const refs = [
    "",
    " ",
    "/",
    "anthropic/",
    "/model",
    "anthropic/claude-sonnet-4-5",
    "Anthropic/Claude-Sonnet-4-5",
    "opus-4.6",
    "anthropic/opus-4.6",
    "anthropic/anthropic/claude-x",
    "nvidia/moonshotai/kimi-k2.5",
    "openrouter/auto",
    "OpenRouter:Auto",
    "openrouter/meta/llama-3",
    "openrouter/llama",
    "google/gemini-3.1-flash-preview",
    "google/gemini-3-pro",
    "vercel-ai-gateway/sonnet",
    "vercel-ai-gateway/gpt-5",
    "huggingface/huggingface/x",
    "xai/grok-4.7-latest",
    "xai/grok-4-fast-reasoning",
    "together/moonshotai/Kimi-K2.5",
    "claude-3-5-sonnet-20241022",
    "local/qwen3-coder",
    " openai / gpt-5 ",
    "haiku",
    "sonnet",
    "opus",
    "anthropic/haiku",
    "z-ai/glm-4",
    "bedrock/claude",
    "gpt-5@work",
    "openai/gpt-5@work",
    "workers-ai/@cf/meta/llama",
    "lmstudio/qwen@q4_k_m",
    "claude-sonnet-4-5@20250929",
    "claude-sonnet-4-5@20250929@work",
    "model@iq4_xs@acct",
    "a@",
    "@b",
    "x/y@preset/z",
    "mini",
    "MINI",
    "smart",
  ];
  const providers = [
    "anthropic",
    "openai",
    "OpenAI",
    "google",
    "openrouter",
    "nvidia",
    "xai",
    "huggingface",
    "together",
    "vercel-ai-gateway",
    "local",
    "Custom",
  ];
  const models = [
    "claude-sonnet-4-5",
    "opus-4.6",
    "sonnet",
    "gpt-5",
    "meta/llama",
    "gemini-3-flash",
    "grok-4.3-latest",
    "huggingface/m",
    "Mixed-Case",
    "x@prof",
    "anthropic/claude-x",
  ];
  for (let i = 0; i < 160; i++)
    refs.push(`${pick(r, providers)}${pick(r, ["/", " / ", "/"])}${pick(r, models)}`);
  for (let i = 0; i < 40; i++) refs.push(pick(r, models));
  for (const raw of refs) {
    for (const defaultProvider of ["anthropic", "openai"]) {
      cases.push({
        fn: "parseModelRef",
        input: { raw, defaultProvider },
        output: clean(parseModelRef(raw, defaultProvider)),
      });
    }
    cases.push({ fn: "splitTrailingAuthProfile", input: raw, output: clean(split(raw)) });
  }
  for (let i = 0; i < 60; i++) {
    const provider = pick(r, ["anthropic", " OpenAI ", "", "openrouter"]);
    const model = pick(r, ["gpt-5", "", "anthropic/x", "OpenRouter/auto", "Anthropic/Claude"]);
    cases.push({ fn: "modelKey", input: { provider, model }, output: modelKey(provider, model) });
  }

  const configs = [
    {
      agents: {
        defaults: {
          model: {
            primary: "anthropic/claude-sonnet-4-5",
            fallbacks: ["openai/gpt-5-mini", "local/qwen3-coder", "openai/gpt-5-mini", "sonnet"],
          },
          models: {
            "anthropic/claude-sonnet-4-5": { alias: "sonnet" },
            "openai/gpt-5-mini": { alias: "mini" },
            "local/qwen3-coder": { alias: "local" },
          },
        },
        list: [
          { id: "main", default: true },
          { id: "ops", model: { primary: "openai/gpt-5-mini", fallbacks: [] } },
          { id: "research", model: "mini" },
          {
            id: "writer",
            model: { primary: "smart", fallbacks: ["Mini", "google/gemini-3-pro"] },
            models: { "anthropic/claude-opus-4-6": { alias: "smart" } },
          },
        ],
      },
      models: {
        providers: {
          local: {
            baseUrl: "http://127.0.0.1:8787/v1",
            api: "openai-completions",
            models: [{ id: "qwen3-coder" }],
          },
        },
      },
    },
    { agents: { defaults: { model: "openai/gpt-5" } } },
    {
      agents: {
        defaults: {
          model: { primary: "fast" },
          models: {
            "xiaomi/mimo-v2-pro": { alias: "fast" },
            "anthropic/claude-haiku-4-5": { alias: "xiaomi/mimo-v2-pro-mit" },
          },
        },
      },
    },
    {},
    {
      agents: {
        defaults: {
          model: { primary: "gpt-5", fallbacks: ["anthropic/opus-4.6", "Haiku@backup"] },
          models: { "anthropic/claude-haiku-4-5": { alias: "Haiku" } },
        },
      },
    },
  ];
  const raws = [
    "sonnet",
    "SONNET",
    "mini",
    "local",
    "smart",
    "fast",
    "xiaomi/mimo-v2-pro-mit",
    "anthropic/sonnet",
    "openai/mini",
    "gpt-5@work",
    "mini@work",
    "qwen3-coder",
    "local/qwen3-coder",
    "opus-4.6",
    "haiku",
    "Haiku@backup",
    "unknown-model",
    "openrouter:auto",
    "",
  ];
  configs.forEach((cfg, configIndex) => {
    for (const agentId of [undefined, "ops", "writer"]) {
      for (const defaultProvider of ["anthropic", "openai"]) {
        const aliasIndex = buildAliasIndex({ cfg, defaultProvider, agentId });
        for (const raw of raws) {
          const resolved = fromString({ cfg, raw, defaultProvider, aliasIndex, agentId });
          cases.push({
            fn: "resolveModelRefFromString",
            input: { configIndex, agentId: agentId ?? null, defaultProvider, raw },
            output: clean(resolved),
          });
        }
      }
    }
    const requests = [
      [undefined, undefined],
      ["anthropic", "claude-sonnet-4-5"],
      ["openai", "gpt-5-mini"],
      ["openai", "mini"],
      ["anthropic", "sonnet"],
      ["anthropic", "smart"],
      ["local", "qwen3-coder"],
      ["google", "gemini-3-pro"],
      ["OpenAI", "GPT-5"],
      ["xiaomi", "fast"],
    ];
    for (const agentId of [undefined, "main", "ops", "research", "writer", "nobody"]) {
      for (const [provider, model] of requests) {
        for (const fallbacksOverride of [undefined, [], ["mini", "anthropic/opus-4.6", "mini"]]) {
          const params = { cfg, agentId, provider, model, fallbacksOverride };
          const result = attempt(() =>
            chain(params).map((c) => ({ provider: c.provider, model: c.model, routeOrigin: c.routeOrigin })),
          );
          cases.push({
            fn: "resolveModelCandidateChain",
            input: clean({ configIndex, agentId, provider, model, fallbacksOverride }),
            output: result,
          });
        }
      }
    }
  });
  write("model-ref", cases);
  fs.writeFileSync(path.join(OUT, "model-configs.json"), `${JSON.stringify(configs, null, 1)}\n`);
}

// ---------------------------------------------------------------------------
// 4. Thinking levels.
{
  const normalize = await get("normalizeThinkLevel", "thinking.shared");
  const pickFallback = await get("pickFallbackThinkingLevel");
  const cases = [];
  const words = [
    "off",
    "none",
    "on",
    "enable",
    "enabled",
    "min",
    "minimal",
    "think",
    "low",
    "thinkhard",
    "think-hard",
    "think_hard",
    "mid",
    "med",
    "medium",
    "thinkharder",
    "think-harder",
    "harder",
    "high",
    "ultrathink",
    "thinkhardest",
    "highest",
    "xhigh",
    "x-high",
    "X_HIGH",
    "extra high",
    "extrahigh",
    "adaptive",
    "auto",
    "AUTO",
    "max",
    "MAX",
    "ultra",
    "u l t r a",
    " High ",
    "default",
    "inherit",
    "clear",
    "reset",
    "unpin",
    "",
    " ",
    "hi",
    "think hard",
    "mid ",
    "Off",
    "NONE",
    "Think-Hard",
  ];
  for (const w of words) cases.push({ fn: "normalizeThinkLevel", input: w, output: normalize(w) ?? null });
  const messages = [
    "Reasoning is mandatory for this endpoint and cannot be disabled.",
    "reasoning is required for this model",
    "This model requires reasoning",
    "Unsupported value: 'minimal' is not supported with this model. Supported values are: 'low', 'medium', and 'high'.",
    "Invalid reasoning effort. Supported values are: low, medium and high.",
    'Invalid reasoning_effort: supported values: "low", "high"',
    "thinking level not supported",
    "thinking budget not supported by this model",
    "thinking.budget is not supported",
    "reasoning.effort 'xhigh' is not supported. Supported values are: 'low', 'medium', 'high'.",
    "Supported values are: low, medium, high.",
    "not supported",
    "rate limit exceeded",
    "reasoning effort level must be one of: low, high",
    "The thinking value 'off' is invalid. supported values are: adaptive, max",
    "reasoning level unsupported; supported values: minimal and low",
    "config/thinking.level is not supported",
    "a.thinking.level.b not supported",
    "Reasoning cannot be disabled for this model. Supported values are: 'medium'",
    "",
  ];
  const attemptedSets = [
    [],
    ["minimal"],
    ["low"],
    ["off"],
    ["minimal", "low", "medium"],
    ["low", "medium", "high"],
    ["off", "minimal"],
    ["adaptive"],
  ];
  for (const message of messages) {
    for (const attempted of attemptedSets) {
      cases.push({
        fn: "pickFallbackThinkingLevel",
        input: { message, attempted },
        output: pickFallback({ message, attempted: new Set(attempted) }) ?? null,
      });
    }
  }
  write("thinking", cases);
}

// ---------------------------------------------------------------------------
// 5. Auth-profile cooldown sequences and order.
{
  const next = await get("computeNextProfileUsageStats");
  const clearExpired = await get("clearExpiredCooldowns", "usage-state");
  const unusableUntil = await get("resolveProfileUnusableUntil");
  const inCooldown = await get("isProfileInCooldown", "usage-state");
  const order = await get("resolveAuthProfileOrder", "order-");
  const r = seededRandom(5);
  const reasons = [
    "rate_limit",
    "timeout",
    "billing",
    "auth",
    "auth_permanent",
    "overloaded",
    "model_not_found",
    "format",
    "unknown",
  ];
  const cases = [];
  for (let s = 0; s < 70; s++) {
    let now = 1_700_000_000_000;
    let stats = {};
    const steps = [];
    const n = 3 + Math.floor(r() * 8);
    for (let i = 0; i < n; i++) {
      now += pick(r, [0, 1_000, 29_000, 31_000, 61_000, 300_001, 600_001, 3_600_001, 90_000_000]);
      const store = { profiles: { p: { provider: "x" } }, usageStats: { p: structuredClone(stats) } };
      clearExpired(store, now);
      const cleared = clean(store.usageStats.p);
      const reason = pick(r, reasons);
      const modelId = maybe(r, 0.6, pick(r, ["m1", "m2"]));
      stats = clean(next({ existing: cleared, now, reason, modelId }));
      steps.push({
        now,
        reason,
        modelId: modelId ?? null,
        cleared,
        stats,
        unusableUntil: unusableUntil(stats) ?? null,
        unusableForM1: unusableUntil(stats, "m1") ?? null,
        unusableAllModels: unusableUntil(stats, null) ?? null,
        inCooldownM1: inCooldown(
          { profiles: { p: { provider: "x" } }, usageStats: { p: stats } },
          "p",
          now,
          "m1",
        ),
        inCooldownM2: inCooldown(
          { profiles: { p: { provider: "x" } }, usageStats: { p: stats } },
          "p",
          now,
          "m2",
        ),
        inCooldownAny: inCooldown(
          { profiles: { p: { provider: "x" } }, usageStats: { p: stats } },
          "p",
          now,
          undefined,
        ),
      });
    }
    cases.push({ fn: "cooldownSequence", steps });
  }
  // Order: times are offsets from the moment of the call (OpenClaw reads Date.now()).
  const types = ["api_key", "token", "oauth"];
  for (let i = 0; i < 50; i++) {
    const count = 1 + Math.floor(r() * 5);
    const profiles = {};
    const usage = {};
    for (let j = 0; j < count; j++) {
      const type = pick(r, types);
      const id = `anthropic:p${j}`;
      profiles[id] =
        type === "api_key"
          ? { type, provider: "anthropic", key: "sk-x" }
          : type === "token"
            ? { type, provider: "anthropic", token: "tok" }
            : { type, provider: "anthropic", access: "a", refresh: "r", expires: Date.now() + 86_400_000 };
      usage[id] = {
        lastUsed: pick(r, [0, 1000, 5000, 9000]),
        cooldownOffset: maybe(r, 0.3, pick(r, [60_000, 600_000, 7_200_000])),
      };
    }
    const explicitOrder = maybe(r, 0.4, Object.keys(profiles).reverse());
    const preferredProfile = maybe(r, 0.3, pick(r, Object.keys(profiles)));
    const now = Date.now();
    const store = {
      profiles,
      usageStats: Object.fromEntries(
        Object.entries(usage).map(([id, u]) => [
          id,
          {
            lastUsed: u.lastUsed,
            ...(u.cooldownOffset ? { cooldownUntil: now + u.cooldownOffset, cooldownReason: "auth" } : {}),
          },
        ]),
      ),
    };
    const cfg = explicitOrder ? { auth: { order: { anthropic: explicitOrder } } } : {};
    const result = order({ cfg, store, provider: "anthropic", preferredProfile });
    cases.push({
      fn: "resolveAuthProfileOrder",
      input: {
        types: Object.fromEntries(Object.entries(profiles).map(([id, p]) => [id, p.type])),
        usage,
        explicitOrder: explicitOrder ?? null,
        preferredProfile: preferredProfile ?? null,
      },
      output: result,
    });
  }
  write("auth-cooldown", cases);
}

// ---------------------------------------------------------------------------
// 6. Queue settings.
{
  const resolve = await get("resolveQueueSettingsCore");
  const normalizeMode = await get("normalizeQueueMode");
  const normalizeDrop = await get("normalizeQueueDropPolicy");
  const r = seededRandom(9);
  const cases = [];
  const modes = [
    "steer",
    "steering",
    "followup",
    "followups",
    "follow-ups",
    "collect",
    "coalesce",
    "interrupt",
    "interrupts",
    "abort",
    "queue",
    "queued",
    "steer-backlog",
    "steer+backlog",
    "steer_backlog",
    " Collect ",
    "",
    "bogus",
  ];
  for (const m of modes) cases.push({ fn: "normalizeQueueMode", input: m, output: normalizeMode(m) ?? null });
  for (const d of ["old", "oldest", "new", "newest", "summarize", "summary", " OLD ", "", "drop"])
    cases.push({ fn: "normalizeQueueDropPolicy", input: d, output: normalizeDrop(d) ?? null });
  for (let i = 0; i < 160; i++) {
    const queue = maybe(r, 0.8, {
      mode: maybe(r, 0.6, pick(r, ["steer", "followup", "collect", "interrupt"])),
      byChannel: maybe(r, 0.5, { telegram: pick(r, ["collect", "interrupt"]), slack: "followup" }),
      debounceMs: maybe(r, 0.5, pick(r, [0, 1500])),
      debounceMsByChannel: maybe(r, 0.5, { telegram: pick(r, [-5, 250, 2000]), slack: 100 }),
      cap: maybe(r, 0.5, pick(r, [1, 10, 7.9])),
      drop: maybe(r, 0.5, pick(r, ["summarize", "old", "new"])),
    });
    const params = {
      cfg: { messages: queue ? { queue } : undefined },
      channel: maybe(r, 0.8, pick(r, ["telegram", "Slack", "discord", " TELEGRAM "])),
      sessionEntry: maybe(r, 0.4, {
        queueMode: maybe(r, 0.6, pick(r, modes)),
        queueDebounceMs: maybe(r, 0.3, pick(r, [-1, 50])),
        queueCap: maybe(r, 0.3, pick(r, [0, 3, 2.5])),
        queueDrop: maybe(r, 0.3, pick(r, ["old", "new"])),
      }),
      inlineMode: maybe(r, 0.2, pick(r, ["steer", "interrupt"])),
      inlineOptions: maybe(r, 0.2, {
        debounceMs: maybe(r, 0.5, 10),
        cap: maybe(r, 0.5, 5),
        dropPolicy: maybe(r, 0.5, "new"),
      }),
      pluginDebounceMs: maybe(r, 0.2, 900),
    };
    cases.push({
      fn: "resolveQueueSettingsCore",
      input: clean(params),
      output: clean(resolve(clean(params))),
    });
  }
  write("queue-settings", cases);
}
