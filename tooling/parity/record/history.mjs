// Records OpenClaw 2026.9.6 history-limit vectors for @agent-kernel/session-store (src/history/limit-turns.ts):
// `limitHistoryTurns(messages, limit)` and `getHistoryLimitFromSessionKey(sessionKey, config, route?)`.
// Run (manual, needs Node 24 and the unpacked package), from the repo root:
//   OPENCLAW_DIST=/work/openclaw-env/openclaw/package/dist /work/openclaw-env/node24/package/bin/node tooling/parity/record/history.mjs
// Writes packages/session-store/fixtures/openclaw/history-limit.json and history-session-key.json.
// A message with `"prelude": true` in a vector stands for one carrying OpenClaw's
// Symbol.for("openclaw.sessionHistoryPrelude") marker (JSON cannot hold symbols); the test maps it back.
import fs from "node:fs";
import { createRequire, registerHooks } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// Some chunks this script needs import packages (e.g. @openclaw/fs-safe) that the unpacked package cannot
// resolve from its own folder when its node_modules link is missing; fall back to $OPENCLAW_DEPS
// (default: <dist>/../../../deps/node_modules, the layout of openclaw-behaviors.md §15's set-up).
const depsDir =
  process.env.OPENCLAW_DEPS ?? path.resolve(process.env.OPENCLAW_DIST ?? ".", "../../../deps/node_modules");
registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (
        (error?.code !== "ERR_MODULE_NOT_FOUND" && error?.code !== "MODULE_NOT_FOUND") ||
        specifier.startsWith(".") ||
        specifier.startsWith("/")
      )
        throw error;
      const parentURL = pathToFileURL(path.join(depsDir, "index.js")).href;
      try {
        return nextResolve(specifier, { ...context, parentURL });
      } catch {
        return { url: pathToFileURL(createRequire(parentURL).resolve(specifier)).href, shortCircuit: true };
      }
    }
  },
});
const { get } = await import("../load-openclaw.mjs");

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, "../../../packages/session-store/fixtures/openclaw");
const limitHistoryTurns = await get("limitHistoryTurns", "builtin-openclaw");
const getHistoryLimitFromSessionKey = await get("getHistoryLimitFromSessionKey", "builtin-openclaw");
const PRELUDE = Symbol.for("openclaw.sessionHistoryPrelude");

// A conversation of `turns` user turns; every turn gets an assistant reply, every third one a tool round trip.
function conversation(turns, lead = []) {
  const messages = [...lead];
  for (let t = 1; t <= turns; t++) {
    messages.push({ role: "user", content: `u${t}` });
    if (t % 3 === 0) {
      messages.push({ role: "assistant", content: `call${t}` });
      messages.push({ role: "toolResult", content: `result${t}` });
    }
    messages.push({ role: "assistant", content: `a${t}` });
  }
  return messages;
}
const summary = { role: "compactionSummary", content: "summary" };
const branch = { role: "branchSummary", content: "branch" };
const prelude = { role: "user", content: "prelude", prelude: true };

const limitInputs = [];
for (const turns of [0, 1, 2, 3, 5, 7, 8, 10, 11, 13, 16]) {
  for (const limit of [undefined, 0, -1, 1, 2, 2.5, 3, 5, 10])
    limitInputs.push({ messages: conversation(turns), limit });
}
for (const lead of [
  [summary],
  [summary, branch],
  [prelude],
  [summary, prelude],
  [{ role: "system", content: "s" }],
]) {
  for (const limit of [1, 2, 4]) limitInputs.push({ messages: conversation(9, lead), limit });
}
limitInputs.push({ messages: [{ role: "assistant", content: "a0" }, ...conversation(8)], limit: 2 });
limitInputs.push({ messages: [...conversation(6), { role: "user", content: "dangling" }], limit: 1 });
limitInputs.push({
  messages: [summary, { role: "toolResult", content: "orphan" }, ...conversation(7)],
  limit: 3,
});

const limitVectors = limitInputs.map(({ messages, limit }) => {
  const live = messages.map((m) => (m.prelude ? { role: m.role, content: m.content, [PRELUDE]: true } : m));
  const result = limitHistoryTurns(live, limit);
  const index = new Map(live.map((m, i) => [m, i]));
  return {
    messages,
    limit: limit ?? null,
    keptIndexes: result.map((m) => index.get(m)),
    sameArray: result === live,
  };
});

const config = {
  session: { identityLinks: { alice: ["telegram:111", "slack:U1"] } },
  channels: {
    telegram: {
      historyLimit: 40,
      dmHistoryLimit: 12,
      dms: { 111: { historyLimit: 3 }, alice: { historyLimit: 4 }, 222: {} },
      accounts: {
        work: { dmHistoryLimit: 7, historyLimit: 30, dms: { 333: { historyLimit: 2 } } },
        "Team-B": { dmHistoryLimit: 9 },
      },
    },
    Slack: { historyLimit: 25 },
    webchat: { dmHistoryLimit: 6 },
    discord: {},
  },
};
const keys = [
  "telegram:direct:111",
  "telegram:dm:111",
  "telegram:direct:222",
  "telegram:direct:999",
  "telegram:direct:111:thread:5",
  "telegram:direct:111:topic:9",
  "telegram:group:-100",
  "telegram:channel:news",
  "agent:main:telegram:direct:111",
  "agent:main:telegram:group:-100",
  "agent:main:main",
  "main",
  "telegram:work:direct:333",
  "telegram:work:direct:444",
  "telegram:team-b:direct:555",
  "telegram:TEAM-B:direct:555",
  "telegram:other:direct:111",
  "slack:channel:C1",
  "slack:group:G1",
  "slack:direct:U1",
  "SLACK:channel:C1",
  "webchat:direct:x",
  "webchat:group:y",
  "discord:direct:1",
  "unknown:direct:1",
  "telegram",
  "telegram:direct",
  "telegram:direct:",
  "telegram:weird:1",
  "",
  "agent:main:telegram:work:direct:333",
];
const routes = [
  undefined,
  { chatType: "direct" },
  { chatType: "group" },
  { peerId: "111" },
  { peerId: "telegram:111" },
  { accountId: "work" },
  { peerId: "333", accountId: "work" },
  { chatType: "direct", peerId: "U1" },
];
const keyVectors = [];
for (const sessionKey of keys)
  for (const route of routes)
    keyVectors.push({
      sessionKey,
      route: route ?? null,
      limit: getHistoryLimitFromSessionKey(sessionKey, config, route) ?? null,
    });
keyVectors.push({
  sessionKey: "telegram:direct:111",
  route: null,
  configMissing: true,
  limit: getHistoryLimitFromSessionKey("telegram:direct:111", undefined) ?? null,
});

fs.mkdirSync(out, { recursive: true });
const meta = { openclaw: "2026.9.6", recordedBy: "tooling/parity/record/history.mjs" };
// One vector per line keeps the files small and their diffs readable.
const write = (file, head, vectors) =>
  fs.writeFileSync(
    path.join(out, file),
    `${JSON.stringify(head).slice(0, -1)},"vectors":[\n${vectors.map((v) => JSON.stringify(v)).join(",\n")}\n]}\n`,
  );
write("history-limit.json", meta, limitVectors);
write("history-session-key.json", { ...meta, config }, keyVectors);
console.log(
  `history-limit.json: ${limitVectors.length} vectors; history-session-key.json: ${keyVectors.length} vectors`,
);
