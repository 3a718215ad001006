// The layer table of the design (DESIGN.md §2) as data. Owns: which workspace package sits
// on which layer, which `@agent-kernel/*` packages each may depend on, and which
// third-party packages are reserved for a few packages. Does not own: reading
// the workspace or deciding what a violation is (layer-check.ts does that).
// To change the architecture, change this file; the check follows.

export const WORKSPACE_SCOPE = "@agent-kernel/";

export type LayerEntry = {
  readonly layer: number;
  /** Package names, or a `prefix*` pattern such as `@agent-kernel/channels-*`. */
  readonly mayDependOn: readonly string[];
};

const CONFIG = "@agent-kernel/config";
const MARKDOWN = "@agent-kernel/markdown";
const SANDBOX = "@agent-kernel/sandbox";
const TOOL_POLICY = "@agent-kernel/tool-policy";
const SESSION_STORE = "@agent-kernel/session-store";
const RUNTIME_RESOLVER = "@agent-kernel/runtime-resolver";
const TURN_PIPELINE = "@agent-kernel/turn-pipeline";
const KERNEL = "@agent-kernel/kernel";
const CHANNELS_CORE = "@agent-kernel/channels-core";
const CHANNEL_ADAPTERS = "@agent-kernel/channels-*";

/**
 * Every package under packages/, by name. An exact name wins over a pattern,
 * so `channels-core` is layer 3 although it also matches `channels-*`.
 */
export const PACKAGE_LAYERS: Readonly<Record<string, LayerEntry>> = {
  [CONFIG]: { layer: 0, mayDependOn: [] },
  // Fence rules and the block chunker: shared by streaming and the channels' text limits, so it sits below both.
  [MARKDOWN]: { layer: 0, mayDependOn: [] },
  // Containment of the commands tools run: no kernel types, so a third party can use it alone.
  [SANDBOX]: { layer: 0, mayDependOn: [] },
  [TOOL_POLICY]: { layer: 1, mayDependOn: [CONFIG] },
  [SESSION_STORE]: { layer: 1, mayDependOn: [CONFIG] },
  [RUNTIME_RESOLVER]: { layer: 2, mayDependOn: [CONFIG, SANDBOX, TOOL_POLICY, SESSION_STORE] },
  [TURN_PIPELINE]: {
    layer: 2,
    mayDependOn: [CONFIG, MARKDOWN, SANDBOX, TOOL_POLICY, SESSION_STORE, RUNTIME_RESOLVER],
  },
  [KERNEL]: {
    layer: 3,
    mayDependOn: [CONFIG, SANDBOX, TOOL_POLICY, SESSION_STORE, RUNTIME_RESOLVER, TURN_PIPELINE],
  },
  // Channels persist pairing requests, approvals and poll offsets in the session store.
  [CHANNELS_CORE]: { layer: 3, mayDependOn: [CONFIG, MARKDOWN, SESSION_STORE] },
  [CHANNEL_ADAPTERS]: { layer: 4, mayDependOn: [CHANNELS_CORE, CONFIG, MARKDOWN] },
};

/** Every package under apps/, whatever its name: thin entry points on top. */
export const APP_LAYER: LayerEntry = {
  layer: 5,
  mayDependOn: [KERNEL, CHANNELS_CORE, CHANNEL_ADAPTERS, CONFIG],
};

/** The umbrella command's package: the one package under apps/ that may depend on the other apps. */
export const UMBRELLA_APP_NAME = "@agent-kernel/cli";

/**
 * The apps the umbrella composes, by name. Listed, not a pattern: adding an app to `agent-kernel` is a
 * change to the architecture, made here on purpose.
 */
export const UMBRELLA_COMPOSES: readonly string[] = [
  "@agent-kernel/agent",
  "@agent-kernel/auto-reply",
  "@agent-kernel/cron",
  "@agent-kernel/followup",
  "@agent-kernel/gateway",
  "@agent-kernel/hybrid-planner",
];

/**
 * The `agent-kernel` command (apps/agent-kernel): one layer above the apps, it only dispatches to their
 * exported command lines. Everything an app may use, plus the apps themselves; no app may depend on it or
 * on another app.
 */
export const UMBRELLA_LAYER: LayerEntry = {
  layer: APP_LAYER.layer + 1,
  mayDependOn: [...APP_LAYER.mayDependOn, ...UMBRELLA_COMPOSES],
};

/** The gateway daemon's package: it runs the channels (auto-reply), the scheduler (cron) and the queue (followup) in one process. */
export const GATEWAY_APP_NAME = "@agent-kernel/gateway";

/**
 * The gateway (apps/gateway): an app that composes three other apps' exported runners into one daemon, so it
 * may depend on exactly those; the umbrella dispatches to it like to any app.
 */
export const GATEWAY_LAYER: LayerEntry = {
  layer: APP_LAYER.layer,
  mayDependOn: [
    ...APP_LAYER.mayDependOn,
    "@agent-kernel/auto-reply",
    "@agent-kernel/cron",
    "@agent-kernel/followup",
  ],
};

/** The entry for a package under apps/: the umbrella's for the umbrella, the gateway's for the gateway, every other app's otherwise. */
export function appLayerEntryFor(packageName: string): LayerEntry {
  if (packageName === UMBRELLA_APP_NAME) return UMBRELLA_LAYER;
  return packageName === GATEWAY_APP_NAME ? GATEWAY_LAYER : APP_LAYER;
}

export type RestrictedThirdParty = {
  readonly pattern: string;
  readonly label: string;
  readonly allowedFor: readonly string[];
  readonly allowedInTooling: boolean;
  /** Test files (and devDependencies) of any package may use it, e.g. to prove an adapter against the real thing. */
  readonly allowedInTests: boolean;
};

/**
 * Third-party packages only some packages may use. The pi SDK stays behind the
 * turn-pipeline and the kernel in shipped code; apps reach it only through the
 * kernel. Tests anywhere may use it (as a devDependency) to check structural
 * adapters and schemas against the real SDK.
 */
export const RESTRICTED_THIRD_PARTY: readonly RestrictedThirdParty[] = [
  {
    // pi-ai is the model catalog and provider layer: the runtime-resolver turns
    // model refs into real pi-ai Model objects, so it may use pi-ai (only).
    pattern: "@earendil-works/pi-ai",
    label: "pi-ai",
    allowedFor: [RUNTIME_RESOLVER, TURN_PIPELINE, KERNEL],
    allowedInTooling: true,
    allowedInTests: true,
  },
  {
    pattern: "@earendil-works/*",
    label: "the pi SDK",
    allowedFor: [TURN_PIPELINE, KERNEL],
    allowedInTooling: true,
    allowedInTests: true,
  },
];

/**
 * Tooling holds test helpers (the fake LLM server, the parity harness), so a
 * package's tests may use a tooling package declared as a devDependency. Its
 * shipped code (non-test files, runtime dependencies) never may (DESIGN §2).
 */
export const TOOLING_ALLOWED_IN_TESTS = true;

export function matchesPattern(name: string, pattern: string): boolean {
  return pattern.endsWith("*")
    ? name.startsWith(pattern.slice(0, -1)) && name.length >= pattern.length
    : name === pattern;
}

/** The entry for a package under packages/, or undefined when the table does not know it. */
export function layerEntryFor(packageName: string): LayerEntry | undefined {
  const exact = PACKAGE_LAYERS[packageName];
  if (exact !== undefined) return exact;
  for (const [pattern, entry] of Object.entries(PACKAGE_LAYERS)) {
    if (pattern.endsWith("*") && matchesPattern(packageName, pattern)) return entry;
  }
  return undefined;
}

export function mayDependOn(entry: LayerEntry, target: string): boolean {
  return entry.mayDependOn.some((pattern) => matchesPattern(target, pattern));
}

export function restrictionFor(packageName: string): RestrictedThirdParty | undefined {
  return RESTRICTED_THIRD_PARTY.find((restriction) => matchesPattern(packageName, restriction.pattern));
}

/** `@agent-kernel/tool-policy` → `tool-policy`, for messages. */
export function shortName(packageName: string): string {
  return packageName.startsWith(WORKSPACE_SCOPE) ? packageName.slice(WORKSPACE_SCOPE.length) : packageName;
}
