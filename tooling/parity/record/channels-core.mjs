// Records the channels-core parity fixtures from the real OpenClaw 2026.9.6 functions: DM/group access
// decisions (resolveDmGroupAccessWithLists + resolveChannelGroupPolicy + resolveChannelGroupRequireMention,
// composed the way the channel plugins compose them) over a matrix of policies and lists, and agent routes
// (resolveAgentRoute) over a matrix of bindings and peers.
//
// Run by hand (Node 24, the unpacked package; see ../README.md), from the repo root:
//   OPENCLAW_DIST=/work/openclaw-env/openclaw/package/dist NODE_PATH=/work/openclaw-env/deps/node_modules \
//   /work/openclaw-env/node24/package/bin/node tooling/parity/record/channels-core.mjs
// Writes packages/channels-core/fixtures/openclaw/{access,routing}.json. Inputs are a fixed matrix.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { get } from "../load-openclaw.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(here, "../../../packages/channels-core/fixtures/openclaw");
fs.mkdirSync(out, { recursive: true });

const resolveDmGroupAccessWithLists = await get("resolveDmGroupAccessWithLists");
const resolveChannelGroupPolicy = await get("resolveChannelGroupPolicy");
const resolveChannelGroupRequireMention = await get("resolveChannelGroupRequireMention");
const resolveAgentRoute = await get("resolveAgentRoute");

const SENDER = "42";
const isSenderAllowed = (list) => list.includes("*") || list.includes(SENDER);
const strip = (object) => Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));

// --- access ---
const access = [];
const lists = [undefined, [], ["42"], ["*"], ["7"]];
for (const dmPolicy of ["pairing", "allowlist", "open", "disabled"]) {
  for (const allowFrom of lists) {
    for (const storeAllowFrom of [[], ["42"]]) {
      const decision = resolveDmGroupAccessWithLists({
        isGroup: false,
        dmPolicy,
        groupPolicy: "allowlist",
        allowFrom,
        groupAllowFrom: undefined,
        storeAllowFrom,
        isSenderAllowed,
      });
      access.push({
        kind: "direct",
        channel: strip({ dmPolicy, groupPolicy: "allowlist", allowFrom }),
        paired: storeAllowFrom.length > 0,
        mentioned: false,
        openclaw: { decision: decision.decision, reasonCode: decision.reasonCode },
      });
    }
  }
}
const groupsCases = [
  undefined,
  { "-100": {} },
  { "*": {} },
  { "-100": { requireMention: false } },
  { "-200": {} },
];
for (const groupPolicy of ["open", "allowlist", "disabled"]) {
  for (const groups of groupsCases) {
    for (const groupAllowFrom of [undefined, ["42"], ["7"]]) {
      for (const allowFrom of [undefined, ["42"]]) {
        for (const mentioned of [true, false]) {
          const channel = strip({ dmPolicy: "pairing", groupPolicy, groups, groupAllowFrom, allowFrom });
          const cfg = { channels: { telegram: channel } };
          const policy = resolveChannelGroupPolicy({
            cfg,
            channel: "telegram",
            groupId: "-100",
            accountId: "default",
            hasGroupAllowFrom: (groupAllowFrom ?? []).length > 0,
          });
          const decision = resolveDmGroupAccessWithLists({
            isGroup: true,
            dmPolicy: "pairing",
            groupPolicy,
            allowFrom,
            groupAllowFrom,
            storeAllowFrom: [],
            isSenderAllowed,
          });
          const requireMention = resolveChannelGroupRequireMention({
            cfg,
            channel: "telegram",
            groupId: "-100",
            accountId: "default",
          });
          let outcome;
          if (groupPolicy === "disabled" || !policy.allowed) outcome = "deny";
          else if (decision.decision !== "allow") outcome = "deny";
          else if (requireMention && !mentioned) outcome = "ignore-no-mention";
          else outcome = "allow";
          access.push({
            kind: "group",
            channel,
            paired: false,
            mentioned,
            openclaw: {
              groupAllowed: policy.allowed,
              decision: decision.decision,
              reasonCode: decision.reasonCode,
              requireMention,
              outcome,
            },
          });
        }
      }
    }
  }
}
fs.writeFileSync(path.join(out, "access.json"), `${JSON.stringify(access, null, 1)}\n`);

// --- routing ---
const agents = {
  list: [
    { id: "main", default: true },
    { id: "alice" },
    { id: "ops" },
    { id: "team" },
    { id: "bot2" },
    { id: "any" },
    { id: "guild" },
  ],
};
const bindingSets = [
  [],
  [{ agentId: "any", match: { channel: "telegram", accountId: "*" } }],
  [{ agentId: "bot2", match: { channel: "telegram" } }],
  [{ agentId: "bot2", match: { channel: "telegram", accountId: "second" } }],
  [
    { agentId: "any", match: { channel: "telegram", accountId: "*" } },
    { agentId: "alice", match: { channel: "telegram", peer: { kind: "direct", id: "42" } } },
  ],
  [
    { agentId: "ops", match: { channel: "telegram", accountId: "*", peer: { kind: "group", id: "-100" } } },
    { agentId: "bot2", match: { channel: "telegram", accountId: "second" } },
  ],
  [
    { agentId: "any", match: { channel: "slack", accountId: "*" } },
    { agentId: "team", match: { channel: "slack", accountId: "*", teamId: "T1" } },
    { agentId: "alice", match: { channel: "slack", accountId: "*", peer: { kind: "channel", id: "C1" } } },
  ],
  [
    { agentId: "guild", match: { channel: "discord", accountId: "*", guildId: "G1" } },
    { agentId: "ops", match: { channel: "discord", accountId: "*", peer: { kind: "group", id: "*" } } },
  ],
];
const inputs = [
  { channel: "telegram", accountId: "default", peer: { kind: "direct", id: "42" } },
  { channel: "telegram", accountId: "default", peer: { kind: "direct", id: "7" } },
  { channel: "telegram", accountId: "second", peer: { kind: "direct", id: "42" } },
  { channel: "telegram", accountId: "second", peer: { kind: "group", id: "-100" } },
  { channel: "telegram", accountId: "default", peer: { kind: "channel", id: "-100" } },
  { channel: "slack", accountId: "A", peer: { kind: "channel", id: "C1" }, teamId: "T1" },
  { channel: "slack", accountId: "A", peer: { kind: "channel", id: "C2" }, teamId: "T1" },
  { channel: "slack", accountId: "A", peer: { kind: "group", id: "C2" }, teamId: "T2" },
  { channel: "discord", accountId: "default", peer: { kind: "group", id: "X" }, guildId: "G1" },
  { channel: "discord", accountId: "default", peer: { kind: "direct", id: "X" }, guildId: "G1" },
];
const routing = [];
for (const bindings of bindingSets) {
  for (const input of inputs) {
    const route = resolveAgentRoute({ cfg: { agents, bindings, session: {} }, ...input });
    routing.push({ bindings, input, openclaw: { agentId: route.agentId, matchedBy: route.matchedBy } });
  }
}
fs.writeFileSync(path.join(out, "routing.json"), `${JSON.stringify(routing, null, 1)}\n`);
console.log(`access: ${access.length} cases, routing: ${routing.length} cases → ${out}`);
