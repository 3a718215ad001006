// A turn's tools: the sandbox preflight (a sandboxed session whose engine cannot start throws
// `SandboxUnavailableError` before anything is stored or sent: its tools never run on the host instead), the
// process's cache of default tools and the turn's list from it, and what the run's events and the system
// prompt say of the sandbox. Does not own: the tools, the sandbox's view or engines (tools/,
// @agent-kernel/sandbox), or the tool policy (tool-policy).
import { resolveAgentConfig } from "@agent-kernel/config";
import type { ToolPolicy } from "@agent-kernel/tool-policy";
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import {
  applyToolPolicy,
  DefaultToolCache,
  type DefaultToolsOptions,
  noteSessionTurn,
  prepareToolSandbox,
  type ToolSandbox,
} from "../tools/index.ts";
import type { TurnEventLog } from "./event-bridge.ts";
import { sameValue } from "./same-value.ts";
import { type SteerHandle, steerableTools } from "./steering.ts";
import type { TurnContext } from "./types.ts";

/** The default tools of every (store, workspace, agent, exec limits, policy), built and wrapped once. */
const defaultTools = new DefaultToolCache();

/** Where the turn's tools run; a sandboxed turn's decision goes into its events. */
export async function prepareTurnSandbox(context: TurnContext, log: TurnEventLog): Promise<ToolSandbox> {
  const toolSandbox = await prepareToolSandbox({
    config: context.config,
    sandbox: context.runtime.sandbox,
    engines: context.sandboxEngines,
  });
  if (toolSandbox.sandboxed) log.emit("lifecycle", { phase: "sandbox", ...sandboxDecision(toolSandbox) });
  return toolSandbox;
}

/** What a session's last turn got its tools from, the tools, and where its `message` tool's texts go. */
interface SessionTools {
  readonly inputs: readonly unknown[];
  readonly tools: readonly ToolDefinition[];
  /** The texts the `message` tool sent go to the current turn's list (turns of a session run one at a time). */
  readonly sent: { texts: string[] };
}

/** Each session's tools (keyed by its pi manager, so they go with the warm binding), see `turnTools`. */
const toolsBySession = new WeakMap<object, SessionTools>();

/**
 * The turn's tools under its policy; what the `message` tool sends is added to `messagingTexts`. With a steer
 * handle, each call is checked against it first (steering.ts: a steered message skips the rest of the assistant
 * message's calls). Given `session` (the session's pi manager), the list its last turn got is handed back,
 * the very same tool objects, while everything the tools are made from is the same: a warm session's turn
 * neither rebuilds nor re-wraps them, and a session with a delivery sink keeps its AgentSession warm too
 * (its `message` tool reports to whichever turn is running).
 */
export function turnTools(
  context: TurnContext,
  toolSandbox: ToolSandbox,
  messagingTexts: string[],
  steering?: SteerHandle,
  session?: object,
): readonly ToolDefinition[] {
  // A reset gave the key a new session: the old session's background commands end with it.
  noteSessionTurn(context.agentId, context.sessionKey, context.sessionId);
  const inputs = toolInputs(context, toolSandbox);
  let current = session === undefined ? undefined : toolsBySession.get(session);
  if (current !== undefined && sameValue(current.inputs, inputs)) {
    current.sent.texts = messagingTexts;
  } else {
    const sent = { texts: messagingTexts };
    current = { inputs, tools: buildTurnTools(context, toolSandbox, sent), sent };
    if (session !== undefined) toolsBySession.set(session, current);
  }
  return steering ? steerableTools(current.tools) : current.tools;
}

/**
 * Everything `buildTurnTools` reads from a turn, cheap to compare: plain values by value, the store, sink,
 * policy, engine and caller tools by identity (sameValue).
 */
function toolInputs(context: TurnContext, toolSandbox: ToolSandbox): readonly unknown[] {
  return [
    context.store,
    context.workspaceDir,
    context.agentId,
    context.sessionId,
    context.deliverySink,
    context.exec?.timeoutSeconds,
    context.exec?.maxOutputBytes,
    toolSandbox,
    context.config.tools.web?.fetch,
    context.config.tools.exec,
    applyPatchOffered(context),
    memoryOffered(context),
    context.toolPolicy,
    context.extraTools,
  ];
}

function buildTurnTools(
  context: TurnContext,
  toolSandbox: ToolSandbox,
  sent: { texts: string[] },
): ToolDefinition[] {
  const tools = defaultTools.toolsFor(
    {
      workspaceDir: context.workspaceDir,
      agentId: context.agentId,
      store: context.store,
      messageSink: context.deliverySink,
      onMessageSent: (text) => sent.texts.push(text),
      execTimeoutSeconds: context.exec?.timeoutSeconds,
      execMaxOutputBytes: context.exec?.maxOutputBytes,
      sandbox: toolSandbox,
      webFetch: context.config.tools.web?.fetch,
      applyPatch: applyPatchOffered(context),
      memory: memoryOffered(context),
      sessionId: context.sessionId,
      background: backgroundSettings(context),
    },
    context.toolPolicy,
  );
  if (context.extraTools !== undefined && context.extraTools.length > 0)
    tools.push(...extraToolsUnder(context.extraTools, context.toolPolicy));
  return tools;
}

/** Each caller-added tool under each policy: wrapped once (null: filtered out), as the default tools are. */
const wrappedExtraTools = new WeakMap<ToolPolicy, WeakMap<ToolDefinition, ToolDefinition | null>>();

/**
 * The caller's extra tools under `policy`, the same wrapped objects for the same tool and policy: a caller
 * that hands the same tools to each turn keeps its session warm (warm-agent-sessions.ts compares tools).
 */
function extraToolsUnder(tools: readonly ToolDefinition[], policy: ToolPolicy): ToolDefinition[] {
  let byTool = wrappedExtraTools.get(policy);
  if (byTool === undefined) {
    byTool = new WeakMap();
    wrappedExtraTools.set(policy, byTool);
  }
  const allowed: ToolDefinition[] = [];
  for (const tool of tools) {
    let wrapped = byTool.get(tool);
    if (wrapped === undefined) {
      wrapped = applyToolPolicy([tool], policy)[0] ?? null;
      byTool.set(tool, wrapped);
    }
    if (wrapped !== null) allowed.push(wrapped);
  }
  return allowed;
}

/** Per config object: each agent's `memorySearch.enabled` (a config is immutable; every turn asks). */
const memoryByConfig = new WeakMap<TurnContext["config"], Map<string, boolean>>();

/** Whether the turn gets the memory tools: `memorySearch.enabled`, the agent's over `agents.defaults`' (default off). */
export function memoryOffered(context: Pick<TurnContext, "config" | "agentId">): boolean {
  let byAgent = memoryByConfig.get(context.config);
  if (byAgent === undefined) {
    byAgent = new Map();
    memoryByConfig.set(context.config, byAgent);
  }
  let offered = byAgent.get(context.agentId);
  if (offered === undefined) {
    const agent = resolveAgentConfig(context.config, context.agentId);
    offered = (agent ?? context.config.agents.defaults).memorySearch?.enabled === true;
    byAgent.set(context.agentId, offered);
  }
  return offered;
}

/** `exec`'s background mode under `tools.exec` (`backgroundMs`, `cleanupMs` and the registry's limits). */
function backgroundSettings(context: Pick<TurnContext, "config">): DefaultToolsOptions["background"] {
  const exec = context.config.tools.exec;
  return {
    defaultYieldMs: exec?.backgroundMs,
    limits: {
      ...(exec?.cleanupMs === undefined ? {} : { finishedTtlMs: exec.cleanupMs }),
      ...(exec?.maxBackgroundProcesses === undefined ? {} : { maxRunning: exec.maxBackgroundProcesses }),
      ...(exec?.backgroundMaxOutputChars === undefined
        ? {}
        : { maxOutputChars: exec.backgroundMaxOutputChars }),
    },
  };
}

/**
 * Whether the turn's model gets `apply_patch`: `tools.exec.applyPatch.enabled` (default true), narrowed by
 * `allowModels` ("gpt-5.4" or "openai/gpt-5.4", any case) when set, as OpenClaw.
 */
export function applyPatchOffered(context: Pick<TurnContext, "config" | "runtime">): boolean {
  const settings = context.config.tools.exec?.applyPatch;
  if (settings?.enabled === false) return false;
  if (settings?.allowModels === undefined) return true;
  const { provider, model } = context.runtime.model.value;
  const names = [model.toLowerCase(), `${provider}/${model}`.toLowerCase()];
  return settings.allowModels.some((allowed) => names.includes(allowed.trim().toLowerCase()));
}

/** What the run record says of a sandboxed turn's tools: engine, mounts, network, limits. */
function sandboxDecision(sandbox: ToolSandbox): Record<string, unknown> {
  const status = sandbox.status?.available ? sandbox.status : undefined;
  return {
    engine: sandbox.engine.name,
    ...(status
      ? { version: status.version, processLimit: status.processLimit, memoryLimit: status.memoryLimit }
      : {}),
    ...(status && status.warnings.length > 0 ? { warnings: status.warnings } : {}),
    cwd: sandbox.cwd,
    mounts: sandbox.mounts.map((mount) => ({ ...mount })),
    network: sandbox.network,
    limits: { ...sandbox.limits },
  };
}

/** What the model is told of its sandbox. */
export function sandboxPromptFacts(sandbox: ToolSandbox): { mounts: string[]; network: boolean } {
  return {
    mounts: sandbox.mounts.map((mount) => `${mount.path} (${mount.writable ? "read-write" : "read-only"})`),
    network: sandbox.network,
  };
}
