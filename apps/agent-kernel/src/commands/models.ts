// `agent-kernel models list|status`: the models the agents are configured with (primary, fallbacks, aliases,
// the custom providers' models), and per provider whether a key is set — an auth profile with a secret, the
// custom provider's apiKey, or the environment variable pi-ai reads (the kernel's providerKeyEnvVars) — so
// which models are usable. Reads the config and the environment only; it never sends a request (doctor
// checks reachability). Owns the command's output and exit codes; not model resolution (runtime-resolver).
import { type KernelConfig, listAgentIds, resolveAgentConfig } from "@agent-kernel/config";
import { COMMON_FLAGS_HELP, expectArgs, parseCommand, stringFlag, subcommand } from "../args.ts";
import { loadOperationContext } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import { type CliIo, line, paint, printJson } from "../io.ts";

const USAGE = `Usage:
  agent-kernel models list [--agent <id>] [--json]
  agent-kernel models status [--json]

list: each agent's primary model, its fallbacks and the aliases, and the custom providers' models, each
marked usable when its provider has a key. status: per provider, where its key comes from, or which
environment variable or auth profile to set. Nothing is sent to a provider (doctor checks reachability).

Examples:
  agent-kernel models list
  agent-kernel models status --json

${COMMON_FLAGS_HELP}`;

/** Where a provider's key comes from, or that it has none. */
export interface ProviderKeyStatus {
  readonly provider: string;
  readonly usable: boolean;
  /** e.g. `auth profile anthropic:work`, `env ANTHROPIC_API_KEY`, `models.providers.local.apiKey`. */
  readonly source?: string;
  /** What to set when it has none. */
  readonly hint?: string;
  readonly custom: boolean;
}

/** One model an agent may use. */
export interface ModelUse {
  readonly ref: string;
  readonly role: "primary" | "fallback" | "alias" | "custom";
  readonly agentId?: string;
  readonly alias?: string;
  readonly usable: boolean;
}

type Selection =
  | string
  | { readonly primary: string; readonly fallbacks?: readonly string[] | undefined }
  | undefined;

function refsOf(selection: Selection): { primary?: string; fallbacks: string[] } {
  if (selection === undefined) return { fallbacks: [] };
  if (typeof selection === "string") return { primary: selection, fallbacks: [] };
  return { primary: selection.primary, fallbacks: [...(selection.fallbacks ?? [])] };
}

const providerOf = (ref: string) =>
  ref.includes("/") ? (ref.split("/")[0] ?? ref).toLowerCase() : ref.toLowerCase();

/** Where each provider the config mentions gets its key. */
export async function providerKeys(
  config: KernelConfig,
  env: Readonly<Record<string, string | undefined>>,
  providers: readonly string[],
): Promise<ProviderKeyStatus[]> {
  const { providerKeyEnvVars } = await import("@agent-kernel/kernel");
  return [...new Set(providers)].sort().map((provider) => {
    const custom = config.models.providers[provider];
    const profiles = Object.entries(config.auth.profiles).filter(
      ([, profile]) => profile.provider === provider,
    );
    const withSecret = profiles.find(([, profile]) => (profile.apiKey ?? profile.token ?? "").trim() !== "");
    if (withSecret !== undefined)
      return {
        provider,
        usable: true,
        source: `auth profile ${withSecret[0]}`,
        custom: custom !== undefined,
      };
    if (custom !== undefined) {
      if (custom.apiKey !== undefined && custom.apiKey.trim() !== "") {
        return { provider, usable: true, source: `models.providers.${provider}.apiKey`, custom: true };
      }
      // A custom server may need no key (a local one); pi sends none and the server decides.
      return {
        provider,
        usable: true,
        source: "none needed by the config (a custom provider)",
        custom: true,
      };
    }
    const names = providerKeyEnvVars(provider);
    const set = names.find((name) => (env[name] ?? "").trim() !== "");
    if (set !== undefined) return { provider, usable: true, source: `env ${set}`, custom: false };
    const hint =
      names.length > 0
        ? `set ${names[0]}${names.length > 1 ? ` (or ${names.slice(1).join(", ")})` : ""}, or add an auth profile for "${provider}" (auth.profiles)`
        : `add an auth profile for "${provider}" (auth.profiles), or define it under models.providers`;
    return { provider, usable: false, hint, custom: false };
  });
}

/** Every model an agent may use: primaries, fallbacks, aliases and custom providers' models. */
export function modelUses(config: KernelConfig, agentIds: readonly string[]): Omit<ModelUse, "usable">[] {
  const uses: Omit<ModelUse, "usable">[] = [];
  for (const agentId of agentIds) {
    const agent = resolveAgentConfig(config, agentId);
    const { primary, fallbacks } = refsOf(agent?.model as Selection);
    if (primary !== undefined) uses.push({ ref: primary, role: "primary", agentId });
    for (const ref of fallbacks) uses.push({ ref, role: "fallback", agentId });
  }
  for (const [ref, entry] of Object.entries(config.agents.defaults.models ?? {})) {
    const alias = (entry as { alias?: string } | undefined)?.alias;
    uses.push({ ref, role: "alias", ...(alias === undefined ? {} : { alias }) });
  }
  for (const [provider, custom] of Object.entries(config.models.providers)) {
    for (const model of custom.models) uses.push({ ref: `${provider}/${model.id}`, role: "custom" });
  }
  return uses;
}

/** `models …`; resolves to the exit code. */
export async function runModels(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(argv, { agent: { type: "string" } }, USAGE, io);
  if (parsed === undefined) return EXIT.ok;
  const { name, rest } = subcommand(parsed, "models", ["list", "status"], USAGE);
  expectArgs(rest, [], `models ${name}`);
  const context = loadOperationContext(parsed.values, io);
  const config = context.config;
  const only = stringFlag(parsed, "agent");
  const agents = listAgentIds(config);
  if (only !== undefined && !agents.includes(only.toLowerCase())) {
    throw new CliError(EXIT.usage, `no agent "${only}" in the config (agents: ${agents.join(", ")})`);
  }
  const uses = modelUses(config, only === undefined ? agents : [only.toLowerCase()]);
  const keys = await providerKeys(
    config,
    io.env,
    uses.map((use) => providerOf(use.ref)),
  );
  const usableProvider = new Set(keys.filter((key) => key.usable).map((key) => key.provider));

  if (name === "list") {
    const list: ModelUse[] = uses.map((use) => ({ ...use, usable: usableProvider.has(providerOf(use.ref)) }));
    if (parsed.values.json === true) {
      printJson(io, { models: list });
      return EXIT.ok;
    }
    if (list.length === 0)
      line(io.stdout, "No model is configured (agents.defaults.model): the kernel's default is used.");
    for (const use of list) {
      const who = use.agentId === undefined ? "" : ` of agent ${use.agentId}`;
      const alias = use.alias === undefined ? "" : ` (alias ${use.alias})`;
      const mark = use.usable
        ? paint(io, io.stdout, "green", "usable")
        : paint(io, io.stdout, "red", "no key");
      line(io.stdout, `${paint(io, io.stdout, "bold", use.ref)}  ${use.role}${who}${alias}  ${mark}`);
    }
    return EXIT.ok;
  }
  if (parsed.values.json === true) {
    printJson(io, { providers: keys });
    return EXIT.ok;
  }
  for (const key of keys) {
    const verdict = key.usable
      ? paint(io, io.stdout, "green", `key: ${key.source}`)
      : paint(io, io.stdout, "red", `no key: ${key.hint}`);
    line(io.stdout, `${paint(io, io.stdout, "bold", key.provider.padEnd(12))} ${verdict}`);
  }
  return EXIT.ok;
}
