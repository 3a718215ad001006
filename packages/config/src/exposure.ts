// Who gets host tools without being the owner. Owns: the effective `nonOwnerHostTools` of an agent (its
// `agents.list[]` entry, else `agents.defaults.tools`, else `tools`; default false) with the key that sets
// it, and `findNonOwnerHostExposure`, which lists every agent whose non-owner sessions can run `exec`
// outside a sandbox (for `agent-kernel-config check` and `doctor`). Pure: reads a validated config only.
// Does not own: enforcing the rule (tool-policy's non-owner-host layer), deciding at run time who is the
// owner (the entry point), or printing anything.
//
// The channel side is a static over-approximation: the default agent counts as reachable through every
// channel, any other agent through the channels its bindings name (whatever their peer or account).
import { defaultAgentId, listAgentIds, resolveAgentConfig } from "./agents.ts";
import { type ConfigPath, formatPath } from "./errors.ts";
import type { KernelConfig } from "./schema.ts";
import type { ChannelConfig } from "./schema-channels.ts";

/** An agent's effective `nonOwnerHostTools`, and where to change it. */
export interface NonOwnerHostToolsSetting {
  /** True: sessions non-owners can reach may run exec/write/edit/apply_patch/process unsandboxed. */
  readonly enabled: boolean;
  /** Where the effective value is written; absent when nothing sets it (the default, false). */
  readonly path?: ConfigPath;
  /**
   * The narrowest key that decides it for this agent: its `agents.list[i].tools.nonOwnerHostTools`,
   * else `agents.defaults.tools.nonOwnerHostTools` when that is written, else `tools.nonOwnerHostTools`.
   */
  readonly grantPath: ConfigPath;
}

/** One agent whose non-owner sessions can run `exec` outside a sandbox. */
export interface NonOwnerHostExposure {
  readonly agentId: string;
  /** The key that grants it (`tools.nonOwnerHostTools`, `agents.list[1].tools.nonOwnerHostTools`, …). */
  readonly path: (string | number)[];
  /** One sentence: the grant, the sandbox mode, the channel settings that let non-owners in, the fix. */
  readonly message: string;
}

function agentIndex(config: KernelConfig, agentId: string | undefined): { id: string; index: number } {
  const id = (agentId ?? defaultAgentId(config)).trim().toLowerCase();
  return { id, index: config.agents.list.findIndex((agent) => agent.id === id) };
}

/** The effective `nonOwnerHostTools` for an agent (default: the config's default agent). */
export function resolveNonOwnerHostTools(config: KernelConfig, agentId?: string): NonOwnerHostToolsSetting {
  const { index } = agentIndex(config, agentId);
  const fromEntry = index >= 0 ? config.agents.list[index]?.tools?.nonOwnerHostTools : undefined;
  const fromDefaults = config.agents.defaults.tools?.nonOwnerHostTools;
  const fromGlobal = config.tools.nonOwnerHostTools;
  const entryPath: ConfigPath = ["agents", "list", index, "tools", "nonOwnerHostTools"];
  const defaultsPath: ConfigPath = ["agents", "defaults", "tools", "nonOwnerHostTools"];
  const globalPath: ConfigPath = ["tools", "nonOwnerHostTools"];
  const grantPath = index >= 0 ? entryPath : fromDefaults !== undefined ? defaultsPath : globalPath;
  if (fromEntry !== undefined) return { enabled: fromEntry, path: entryPath, grantPath };
  if (fromDefaults !== undefined) return { enabled: fromDefaults, path: defaultsPath, grantPath };
  if (fromGlobal !== undefined) return { enabled: fromGlobal, path: globalPath, grantPath };
  return { enabled: false, grantPath };
}

/** A way in for non-owners: a channel's (or account's) DM or group setting. */
interface EntryPoint {
  readonly kind: "dm" | "group";
  /** `channels.telegram.dmPolicy is "open"`. */
  readonly text: string;
}

const hasEntries = (list: readonly string[] | undefined) =>
  list?.some((entry) => entry.trim() !== "") === true;

/** The DM and group settings of one channel, and of each enabled account, that admit non-owners. */
function channelEntryPoints(id: string, channel: ChannelConfig): EntryPoint[] {
  if (channel.enabled === false) return [];
  const found = new Map<string, EntryPoint>();
  const add = (kind: EntryPoint["kind"], path: ConfigPath, text: string) => {
    const where = formatPath(path);
    found.set(where, { kind, text: `${where} ${text}` });
  };
  const groupsListed = Object.values(channel.groups ?? {}).some((group) => group.enabled !== false);
  type AccountSettings = NonNullable<ChannelConfig["accounts"]>[string];
  const scopes: { path: ConfigPath; settings: AccountSettings | undefined }[] = [
    { path: ["channels", id], settings: undefined },
    ...Object.entries(channel.accounts ?? {})
      .filter(([, account]) => account.enabled !== false)
      .map(([accountId, account]) => ({ path: ["channels", id, "accounts", accountId], settings: account })),
  ];
  for (const { path, settings } of scopes) {
    const dmPath = settings?.dmPolicy === undefined ? ["channels", id] : path;
    const dmPolicy = settings?.dmPolicy ?? channel.dmPolicy;
    // "open" admits strangers; "pairing" admits senders the owner approved, who are still not owners.
    if (dmPolicy === "open") add("dm", [...dmPath, "dmPolicy"], 'is "open"');
    if (dmPolicy === "pairing")
      add("dm", [...dmPath, "dmPolicy"], 'is "pairing" (approved senders are not owners)');
    const groupPath = settings?.groupPolicy === undefined ? ["channels", id] : path;
    const groupPolicy = settings?.groupPolicy ?? channel.groupPolicy;
    const groupAllowFrom = settings?.groupAllowFrom ?? channel.groupAllowFrom;
    if (groupPolicy === "open") add("group", [...groupPath, "groupPolicy"], 'is "open"');
    else if (groupPolicy === "allowlist" && (groupsListed || hasEntries(groupAllowFrom))) {
      add("group", [...groupPath, "groupPolicy"], 'is "allowlist" with groups or group senders listed');
    }
  }
  return [...found.values()];
}

/** The channels whose messages can reach an agent (see the header). */
function channelsReaching(config: KernelConfig, agentId: string): string[] {
  const ids = Object.keys(config.channels);
  if (agentId === defaultAgentId(config)) return ids;
  const bound = new Set(
    config.bindings
      .filter((binding) => binding.agentId === agentId)
      .map((binding) => binding.match.channel.trim().toLowerCase()),
  );
  return ids.filter((id) => bound.has(id));
}

const list = (items: readonly string[]) =>
  items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;

/**
 * Every agent whose non-owner sessions can run `exec` unsandboxed: its effective `nonOwnerHostTools` is
 * true, a channel that reaches it lets non-owners in (DMs under "open" or "pairing", groups allowed), and
 * its `sandbox.mode` leaves those sessions on the host ("off"; "non-main" when `session.dmScope` or
 * `session.groupScope` is "main", or `session.scope` is "global", puts them in the unsandboxed main session).
 */
export function findNonOwnerHostExposure(config: KernelConfig): NonOwnerHostExposure[] {
  const exposures: NonOwnerHostExposure[] = [];
  const session = config.session;
  const global = session.scope === "global";
  for (const agentId of listAgentIds(config)) {
    const setting = resolveNonOwnerHostTools(config, agentId);
    if (!setting.enabled || setting.path === undefined) continue;
    const agent = resolveAgentConfig(config, agentId);
    const mode = agent?.sandbox.mode ?? config.agents.defaults.sandbox.mode;
    if (mode === "all") continue;
    const inMain = {
      dm: global || session.dmScope === "main",
      group: global || session.groupScope === "main",
    };
    const ways = channelsReaching(config, agentId)
      .flatMap((id) => {
        const channel = config.channels[id];
        return channel === undefined ? [] : channelEntryPoints(id, channel);
      })
      .filter((way) => mode === "off" || inMain[way.kind]);
    if (ways.length === 0) continue;
    const { index } = agentIndex(config, agentId);
    const sandboxKey = formatPath(
      index >= 0 ? ["agents", "list", index, "sandbox", "mode"] : ["agents", "defaults", "sandbox", "mode"],
    );
    const sandboxText =
      mode === "off"
        ? 'sandbox.mode is "off"'
        : 'sandbox.mode is "non-main" but these sessions share the unsandboxed main session (session scope "main" or "global")';
    exposures.push({
      agentId,
      path: [...setting.path],
      message:
        `agent "${agentId}" lets people who are not the owner run exec, write and edit outside a sandbox: ` +
        `${formatPath(setting.path)} is true, ${sandboxText}, and ${list(ways.map((way) => way.text))}; ` +
        `set ${sandboxKey}: "all", or remove ${formatPath(setting.path)}`,
    });
  }
  return exposures;
}
