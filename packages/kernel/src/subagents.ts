// Subagents and agent-to-agent messages, through the kernel (never around it). Owns: `sessions_spawn` — a
// child session `agent:<id>:subagent:<uuid>` (nesting repeats `:subagent:<uuid>`, as OpenClaw) with its
// lineage in the session row (`spawnedBy`, `parentSessionKey`, `spawnDepth`, `subagentRole`), prepared with
// the minimal prompt mode (so the tool policy's subagent layer applies by its depth) and run by
// `Kernel.executeTurn` with the parent's runId recorded, under the subagent lane (its own cap,
// `agents.defaults.subagents.maxConcurrent`, default 8) and the depth limit (`maxSpawnDepth`); the child's
// result announced back to the parent session as a turn of its own (OpenClaw's announce step). And
// `sessions_send` — a turn of another session with the message, checked against the session-visibility rule
// (OpenClaw's `tools.sessions.visibility`, default `tree`), its reply returned to the sender. Does not own:
// the tools' schemas (turn-pipeline's session-agent-tools.ts), lanes of sessions and the global cap
// (lanes.ts, inside `executeTurn`), or which tools a subagent keeps (tool-policy's subagent layer).
import { randomUUID } from "node:crypto";
import { type KernelConfig, resolveAgentConfig } from "@agent-kernel/config";
import { subagentDepthFromSessionKey } from "@agent-kernel/tool-policy";
import {
  type SendAnswer,
  type SendRequest,
  type SpawnAnswer,
  type SpawnRequest,
  sessionsSendTool,
  sessionsSpawnTool,
} from "@agent-kernel/turn-pipeline";
import type { TurnToolProvider } from "./executor-call.ts";
import { createKernel, type Kernel, type KernelOptions } from "./kernel.ts";
import { LaneScheduler } from "./lanes.ts";
import type { DeliverySink, PreparedSession, TurnInput, TurnOutcome } from "./types.ts";

/**
 * Which sessions `sessions_send` may reach (OpenClaw's `tools.sessions.visibility`): `self` none but the
 * current one (which it cannot send to), `tree` the sessions this session spawned (and theirs), `agent` any
 * session of the same agent, `all` any session of any agent.
 */
export type SessionVisibility = "self" | "tree" | "agent" | "all";

/** Settings of a kernel's subagents beyond the config. */
export interface SubagentSettings {
  /** Subagent runs at once; default `agents.defaults.subagents.maxConcurrent` (8). */
  readonly maxConcurrent?: number | undefined;
  /** Default `tree`, as OpenClaw. */
  readonly visibility?: SessionVisibility | undefined;
  /** Agents a parent may spawn under besides its own (OpenClaw's `subagents.allowAgents`); default none. */
  readonly allowAgents?: readonly string[] | undefined;
}

/** One spawned subagent run, as the kernel's subagents track it. */
export interface SubagentRun {
  readonly runId: string;
  readonly parentRunId: string;
  readonly parentSessionKey: string;
  readonly childSessionKey: string;
  readonly depth: number;
  readonly label?: string;
  /** `queued` in the subagent lane, `running`, or ended (`announced` once the parent got its result). */
  status: "queued" | "running" | "ended" | "announced" | "failed";
  outcome?: TurnOutcome;
  /** The parent-session run that announced the result. */
  announceRunId?: string;
  error?: string;
}

/** The subagent lane's state. */
export interface SubagentLaneStats {
  readonly maxConcurrent: number;
  readonly running: number;
  readonly queued: number;
}

/** The run a tool call belongs to: what `sessions_spawn` / `sessions_send` act on behalf of. */
export interface CallerRun {
  readonly prepared: PreparedSession;
  readonly turn: TurnInput;
  readonly runId: string;
}

const DEFAULT_SEND_TIMEOUT_SECONDS = 30;

/** The agent id of a stored session key (`agent:<id>:<rest>`), else undefined. */
function agentOfKey(sessionKey: string): string | undefined {
  const match = /^agent:([^:]+):./i.exec(sessionKey);
  return match?.[1]?.toLowerCase();
}

/** The spawn-depth limit for an agent: its own `subagents.maxSpawnDepth`, else the defaults' (5). */
function maxSpawnDepthFor(config: KernelConfig, agentId: string): number {
  return (
    resolveAgentConfig(config, agentId)?.subagents?.maxSpawnDepth ??
    config.agents.defaults.subagents.maxSpawnDepth
  );
}

/**
 * The model and thinking level of a subagent of `agentId`: its own `subagents.model` / `thinking`, else the
 * defaults' (OpenClaw's `agents.defaults.subagents.model`); absent: the agent's own, as any run.
 */
function subagentRunOptions(config: KernelConfig, agentId: string): { model?: string; thinking?: string } {
  const own = resolveAgentConfig(config, agentId)?.subagents;
  const defaults = config.agents.defaults.subagents;
  const selection = own?.model ?? defaults.model;
  const model = typeof selection === "string" ? selection : selection?.primary;
  const thinking = own?.thinking ?? defaults.thinking;
  return { ...(model === undefined ? {} : { model }), ...(thinking === undefined ? {} : { thinking }) };
}

/** The extra system prompt of a subagent run (OpenClaw's subagent context, in short). */
export function subagentSystemPrompt(input: {
  readonly task: string;
  readonly label?: string | undefined;
  readonly requesterSessionKey: string;
  readonly childSessionKey: string;
}): string {
  return [
    "# Subagent Context",
    "",
    "You are a subagent spawned by the main agent for a specific task.",
    "- Complete the task; that is your entire purpose. Do not talk to the user: your final answer is " +
      "reported back to the agent that spawned you.",
    "- Stay focused on the task; do not start other work.",
    "- End with what you found or did, concisely.",
    "",
    "## Session Context",
    ...(input.label ? [`- Label: ${input.label}`] : []),
    `- Requester session: ${input.requesterSessionKey}`,
    `- Your session: ${input.childSessionKey}`,
  ].join("\n");
}

/** What the parent session's agent is told when a subagent ends (OpenClaw's announce message, in its shape). */
export function subagentAnnouncePrompt(run: {
  readonly label?: string | undefined;
  readonly task: string;
  readonly childSessionKey: string;
  readonly runId: string;
  readonly outcome?: TurnOutcome | undefined;
  readonly error?: string | undefined;
}): string {
  const name = run.label ?? (run.task.length > 60 ? `${run.task.slice(0, 57)}...` : run.task);
  const status = run.outcome?.status;
  const how =
    status === "ok"
      ? "completed successfully"
      : status === "timeout"
        ? "timed out"
        : status === "aborted"
          ? "was aborted"
          : `failed: ${run.error ?? run.outcome?.result.errorMessage ?? run.outcome?.result.reason ?? "unknown error"}`;
  const findings = run.outcome?.result.assistantText.trim() || "(no output)";
  return [
    `A subagent task "${name}" just ${how}.`,
    "",
    "Findings:",
    findings,
    "",
    `Stats: session ${run.childSessionKey} • run ${run.runId}`,
    "",
    "Summarize this naturally for the user. Keep it brief. Do not mention technical details like the session " +
      "or run ids, or that this was a subagent task. Reply with NO_REPLY if no announcement is needed.",
  ].join("\n");
}

/**
 * A kernel's subagents: the `sessions_spawn` / `sessions_send` tools of each of its runs (`turnTools`), the
 * subagent lane, and the runs spawned so far.
 */
export class Subagents {
  readonly #kernel: Kernel;
  readonly #options: KernelOptions;
  readonly #settings: SubagentSettings;
  readonly #lane: LaneScheduler;
  readonly #runs = new Map<string, SubagentRun>();
  readonly #work = new Set<Promise<void>>();

  constructor(kernel: Kernel, options: KernelOptions, settings: SubagentSettings = {}) {
    this.#kernel = kernel;
    this.#options = options;
    this.#settings = settings;
    this.#lane = new LaneScheduler(
      settings.maxConcurrent ?? options.config.agents.defaults.subagents.maxConcurrent,
    );
  }

  /** Per preparation: its tools, acting for its current run (a session runs one turn at a time, in its lane). */
  readonly #toolsByPreparation = new WeakMap<
    PreparedSession,
    { current: CallerRun; readonly tools: ReturnType<TurnToolProvider> }
  >();

  /**
   * The tools of one run of the kernel (its provider: see `createKernelWithSubagents`). The same objects for
   * every turn of a preparation, so the session stays warm; they act for the turn running now.
   */
  readonly turnTools: TurnToolProvider = (run) => {
    const known = this.#toolsByPreparation.get(run.prepared);
    if (known !== undefined) {
      known.current = run;
      return known.tools;
    }
    const entry: { current: CallerRun; tools: ReturnType<TurnToolProvider> } = { current: run, tools: [] };
    entry.tools = [
      sessionsSpawnTool({ spawn: (request) => this.spawn(entry.current, request) }),
      sessionsSendTool({ send: (request) => this.send(entry.current, request) }),
    ];
    this.#toolsByPreparation.set(run.prepared, entry);
    return entry.tools;
  };

  /** Every subagent run spawned by this kernel, oldest first. */
  runs(): SubagentRun[] {
    return [...this.#runs.values()];
  }

  /** The subagent lane now: its cap, runs holding a slot, spawned runs waiting for one. */
  laneStats(): SubagentLaneStats {
    const running = this.#lane.stats().running;
    const waiting = this.runs().filter((run) => run.status === "queued").length;
    return { maxConcurrent: this.#lane.maxConcurrent, running, queued: waiting };
  }

  /** Resolves once every spawned run, its announcement and every unawaited send have ended. */
  async idle(): Promise<void> {
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
  }

  #track(work: Promise<void>): void {
    this.#work.add(work);
    void work.finally(() => this.#work.delete(work));
  }

  /** Starts a subagent run for `parent` in the background; refuses beyond the depth limit. */
  async spawn(parent: CallerRun, request: SpawnRequest): Promise<SpawnAnswer> {
    const { prepared } = parent;
    const config = prepared.config;
    const parentAgent = prepared.runtimeContext.agentId.value;
    const parentKey = prepared.runtimeContext.sessionKey.value;
    const agentId = request.agentId?.toLowerCase() ?? parentAgent;
    if (agentId !== parentAgent && !(this.#settings.allowAgents ?? []).includes(agentId)) {
      return {
        status: "forbidden",
        error: `agentId "${agentId}" is not allowed for sessions_spawn (allowed: ${[parentAgent, ...(this.#settings.allowAgents ?? [])].join(", ")})`,
      };
    }
    const parentDepth = prepared.toolPolicyContext.spawnDepth ?? subagentDepthFromSessionKey(parentKey);
    const maxDepth = maxSpawnDepthFor(config, parentAgent);
    if (parentDepth >= maxDepth) {
      return {
        status: "forbidden",
        error: `sessions_spawn is not allowed at this depth (current depth: ${parentDepth}, max: ${maxDepth})`,
      };
    }
    const depth = parentDepth + 1;
    const id = randomUUID();
    const childSessionKey =
      parentDepth > 0 && agentId === parentAgent
        ? `${parentKey}:subagent:${id}`
        : `agent:${agentId}:subagent:${id}`;
    const runId = randomUUID();
    try {
      await this.#options.store.sessions.create({
        agentId,
        sessionKey: childSessionKey,
        meta: {
          spawnedBy: parentKey,
          parentSessionKey: parentKey,
          spawnDepth: depth,
          subagentRole: depth < maxSpawnDepthFor(config, agentId) ? "orchestrator" : "leaf",
          ...(request.label === undefined ? {} : { label: request.label }),
        },
      });
    } catch (error) {
      return { status: "error", error: `could not create the subagent session: ${String(error)}` };
    }
    const record: SubagentRun = {
      runId,
      parentRunId: parent.runId,
      parentSessionKey: parentKey,
      childSessionKey,
      depth,
      ...(request.label === undefined ? {} : { label: request.label }),
      status: "queued",
    };
    this.#runs.set(runId, record);
    this.#track(this.#runChild(parent, request, record, agentId));
    return { status: "accepted", childSessionKey, runId };
  }

  async #runChild(
    parent: CallerRun,
    request: SpawnRequest,
    record: SubagentRun,
    agentId: string,
  ): Promise<void> {
    try {
      record.outcome = await this.#lane.run(record.childSessionKey, async () => {
        record.status = "running";
        const child = await this.#kernel.prepareSession({
          agentId,
          sessionKey: record.childSessionKey,
          config: parent.prepared.config,
          runOptions: {
            ...subagentRunOptions(parent.prepared.config, agentId),
            entryPoint: "subagent",
            promptMode: "minimal",
            ...(request.runTimeoutSeconds === undefined || request.runTimeoutSeconds === 0
              ? {}
              : { timeoutSeconds: request.runTimeoutSeconds }),
          },
        });
        return this.#kernel.executeTurn(child, {
          prompt: request.task,
          runId: record.runId,
          parentRunId: record.parentRunId,
          extraSystemPrompt: subagentSystemPrompt({
            task: request.task,
            label: request.label,
            requesterSessionKey: record.parentSessionKey,
            childSessionKey: record.childSessionKey,
          }),
          ...(request.runTimeoutSeconds === 0 ? { timeoutMs: 0 } : {}),
        });
      });
      record.status = "ended";
    } catch (error) {
      record.status = "failed";
      record.error = error instanceof Error ? error.message : String(error);
    }
    await this.#announce(parent, request, record);
  }

  /** The child's result as a turn of the parent session (after the parent's running turn: its lane is FIFO). */
  async #announce(parent: CallerRun, request: SpawnRequest, record: SubagentRun): Promise<void> {
    try {
      const parentSession = await this.#kernel.prepareSession(parent.prepared.session);
      const delivery: DeliverySink | undefined = parent.turn.delivery;
      const announced = await this.#kernel.executeTurn(parentSession, {
        prompt: subagentAnnouncePrompt({
          label: request.label,
          task: request.task,
          childSessionKey: record.childSessionKey,
          runId: record.runId,
          outcome: record.outcome,
          error: record.error,
        }),
        ...(delivery === undefined ? {} : { delivery }),
      });
      record.announceRunId = announced.runId;
      if (record.status === "ended") record.status = "announced";
    } catch (error) {
      record.error ??= `announce failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /** Runs a turn of another session with `request.message`, if the visibility rule lets `caller` reach it. */
  async send(caller: CallerRun, request: SendRequest): Promise<SendAnswer> {
    const callerAgent = caller.prepared.runtimeContext.agentId.value;
    const callerKey = caller.prepared.runtimeContext.sessionKey.value;
    const sessionKey = /^agent:/i.test(request.sessionKey)
      ? request.sessionKey
      : `agent:${callerAgent}:${request.sessionKey}`;
    const forbidden = (error: string): SendAnswer => ({ status: "forbidden", sessionKey, error });
    const agentId = agentOfKey(sessionKey);
    if (agentId === undefined) return forbidden(`"${sessionKey}" is not a session key`);
    if (sessionKey.toLowerCase() === callerKey.toLowerCase())
      return forbidden("sessions_send cannot send to the current session");
    const visibility = this.#settings.visibility ?? "tree";
    const target = await this.#options.store.sessions.get({ agentId, sessionKey });
    if (visibility === "self") return forbidden("session visibility is self: no other session is reachable");
    if (agentId !== callerAgent && visibility !== "all")
      return forbidden(`session "${sessionKey}" belongs to agent "${agentId}"; visibility ${visibility}`);
    if (
      visibility === "tree" &&
      !sessionKey.toLowerCase().startsWith(`${callerKey.toLowerCase()}:subagent:`) &&
      target?.meta.spawnedBy !== callerKey
    ) {
      return forbidden(
        `session "${sessionKey}" is not in this session's tree (visibility tree: only sessions it spawned)`,
      );
    }
    if (target === undefined) return forbidden(`no session "${sessionKey}"`);
    const runId = randomUUID();
    const running = (async () => {
      const prepared = await this.#kernel.prepareSession({
        agentId,
        sessionKey,
        config: caller.prepared.config,
        runOptions: { entryPoint: "sessions_send" },
      });
      return this.#kernel.executeTurn(prepared, {
        prompt: request.message,
        runId,
        parentRunId: caller.runId,
        extraSystemPrompt:
          `This message was sent by session ${callerKey} through sessions_send; ` +
          "your reply is returned to it.",
      });
    })();
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    this.#track(settled);
    const timeoutSeconds = request.timeoutSeconds ?? DEFAULT_SEND_TIMEOUT_SECONDS;
    if (timeoutSeconds === 0) return { status: "accepted", runId, sessionKey };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutSeconds * 1000);
    });
    try {
      const outcome = await Promise.race([running, timedOut]);
      if (outcome === "timeout") return { status: "timeout", runId, sessionKey };
      if (outcome.status !== "ok") {
        return {
          status: "error",
          runId,
          sessionKey,
          error: outcome.result.errorMessage ?? outcome.result.reason ?? outcome.status,
        };
      }
      return { status: "ok", runId, sessionKey, reply: outcome.result.assistantText };
    } catch (error) {
      return {
        status: "error",
        runId,
        sessionKey,
        error: error instanceof Error ? error.message : String(error),
      };
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * A kernel whose runs get `sessions_spawn` and `sessions_send` (under each run's tool policy), with its
 * subagents. Any `turnTools` of `options` are kept.
 */
export function createKernelWithSubagents(
  options: KernelOptions,
  settings: SubagentSettings = {},
): { readonly kernel: Kernel; readonly subagents: Subagents } {
  let subagents: Subagents | undefined;
  const kernel = createKernel({
    ...options,
    turnTools: (run) => [...(options.turnTools?.(run) ?? []), ...(subagents?.turnTools(run) ?? [])],
  });
  subagents = new Subagents(kernel, options, settings);
  return { kernel, subagents };
}
