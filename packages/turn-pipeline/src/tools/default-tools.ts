// The kernel's default tool set for a turn. Owns: the file tools (`read` bounded and streamed, pi's `write` /
// `edit`) over the turn's path view — in a sandboxed session run inside the sandbox, through the same engine
// as `exec` (file-operations.ts), on the host otherwise —, `exec` through the turn's sandbox engine (exec-tool.ts), `message`
// through the turn's delivery sink (recording what it sent for the messaging-tool dedupe), `sessions_list`
// and `sessions_history` over the store, `web_fetch` (web-fetch.ts) unless `tools.web.fetch.enabled` is false,
// `apply_patch` (apply-patch.ts) unless `tools.exec.applyPatch` leaves it out, `memory_search` / `memory_get`
// (../memory) when memory is on — over the memory files of the directory the tools work in (the sandbox's
// workspace when sandboxed: what the model writes with `write` is what it finds), indexed in the agent's
// database on the first memory call —, `exec`'s background mode and
// `process` over the session's background commands (process-tool.ts, made for each turn), wrapping the whole list with tool-policy (filtered, then checked
// again at every call), and keeping the turn-independent tools built and wrapped between turns
// (`DefaultToolCache`). In a sandboxed session the file tools see exactly what `exec` sees: the sandbox's
// mounts. Does not own: the policy itself (tool-policy), delivery (the sink's owner), path confinement rules
// (path-view.ts) or containment (the sandbox engines).

import { isAbsolute, join, relative } from "node:path";
import { memoryDatabaseFor, type SessionStore, type TranscriptEntry } from "@agent-kernel/session-store";
import { enforceToolPolicyOnAll, type ToolPolicy } from "@agent-kernel/tool-policy";
import { Type } from "@earendil-works/pi-ai";
import {
  createEditToolDefinition,
  createWriteToolDefinition,
  defineTool,
  type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import { MemoryIndex, memoryTools } from "../memory/index.ts";
import { applyPatchTool } from "./apply-patch.ts";
import { execTool } from "./exec-tool.ts";
import {
  hostEditOperations,
  hostWriteOperations,
  locateInView,
  sandboxEditOperations,
  sandboxReadSource,
  sandboxWriteOperations,
} from "./file-operations.ts";
import { type PathView, resolveInView } from "./path-view.ts";
import { DEFAULT_PROCESS_LIMITS, type ProcessLimits, processScopeFor } from "./process-registry.ts";
import { backgroundExecTool, processTool } from "./process-tool.ts";
import { createBoundedReadTool } from "./read-tool.ts";
import { hostToolSandbox, type ToolSandbox } from "./tool-sandbox.ts";
import { type WebFetchSettings, webFetchTool } from "./web-fetch.ts";

/** Where the `message` tool sends (the executor's DeliverySink has this shape). */
export interface MessageSink {
  send(message: {
    readonly text: string;
    readonly target?: string;
  }): Promise<{ readonly messageId?: string }>;
}

export interface DefaultToolsOptions {
  readonly workspaceDir: string;
  readonly agentId: string;
  readonly store: SessionStore;
  /** Absent: no `message` tool. */
  readonly messageSink?: MessageSink | undefined;
  /** Receives every text the `message` tool sent (feeds ReplyStream's duplicate filter). */
  readonly onMessageSent?: ((text: string) => void) | undefined;
  readonly execTimeoutSeconds?: number | undefined;
  readonly execMaxOutputBytes?: number | undefined;
  /**
   * Where `exec` runs and what the file tools see (`prepareToolSandbox`). Absent: on the host, in
   * `workspaceDir`, with the default environment allowlist.
   */
  readonly sandbox?: ToolSandbox | undefined;
  /**
   * `tools.web.fetch`: the `web_fetch` tool's limits and SSRF policy. Absent: OpenClaw's defaults (the tool
   * is offered, internal addresses refused); `enabled: false`: no `web_fetch`.
   */
  readonly webFetch?: WebFetchSettings | undefined;
  /** Whether `apply_patch` is offered (`tools.exec.applyPatch`, resolved for the turn's model). Default true. */
  readonly applyPatch?: boolean | undefined;
  /**
   * `memory_search` and `memory_get` (`agents.defaults.memorySearch.enabled`): over `MEMORY.md` and
   * `memory/*.md` of the directory the tools work in, indexed in the agent's database
   * (`memoryDatabaseFor`). Default false.
   */
  readonly memory?: boolean | undefined;
  /** The session whose background commands `exec` starts and `process` sees (absent: one scope for the agent). */
  readonly sessionId?: string | undefined;
  /** `exec`'s background mode: the yield of a call that gives none (`tools.exec.backgroundMs`) and the limits. */
  readonly background?:
    | { readonly defaultYieldMs?: number | undefined; readonly limits?: Partial<ProcessLimits> | undefined }
    | undefined;
}

export const DEFAULT_EXEC_TIMEOUT_SECONDS = 120;
export const DEFAULT_EXEC_MAX_OUTPUT_BYTES = 16 * 1024;
const DEFAULT_HISTORY_LIMIT = 20;

/** Distinct engines and environments get distinct numbers, so a cache key can name them. */
const identities = new WeakMap<object, number>();
let nextIdentity = 1;
function identityOf(value: object): number {
  let id = identities.get(value);
  if (id === undefined) {
    id = nextIdentity++;
    identities.set(value, id);
  }
  return id;
}

/** What makes two sandboxes give different tools. */
function sandboxKey(sandbox: ToolSandbox | undefined): string {
  if (sandbox === undefined) return "host";
  return JSON.stringify([
    sandbox.sandboxed,
    identityOf(sandbox.engine),
    identityOf(sandbox.env),
    sandbox.cwd,
    sandbox.mounts,
    sandbox.network,
    sandbox.limits,
  ]);
}

type AnyToolDefinition = ToolDefinition;
const asDefinition = (tool: unknown): AnyToolDefinition => tool as AnyToolDefinition;

type FileToolKind = "write" | "edit";

/** pi's write or edit tool over the given operations. */
function piFileTool(kind: FileToolKind, cwd: string, operations: unknown): AnyToolDefinition {
  return asDefinition(
    kind === "write"
      ? createWriteToolDefinition(cwd, { operations: operations as never })
      : createEditToolDefinition(cwd, { operations: operations as never }),
  );
}

/** `text` with every `from` replaced by `to`. */
const replaceAll = (text: string, from: string, to: string): string => text.split(from).join(to);

/**
 * pi's `write` or `edit` over the session's view. Sandboxed: the path is checked lexically against the view
 * and pi's tool runs with operations that are sandboxed commands (the kernel inside resolves the path).
 * Unsandboxed: the path is resolved in the host view (links followed, none leaving it) and pi's tool runs on
 * the host path with operations that open only regular files, never following a last-component link or
 * waiting on a FIFO. Either way the model sees the file by its path in the view.
 */
function fileToolInView(kind: FileToolKind, sandbox: ToolSandbox, view: PathView): AnyToolDefinition {
  // The schema, description and renderers: pi's (the operations of each call are made for it).
  const definition = piFileTool(kind, view.cwd, undefined);
  const hostOperations = kind === "write" ? hostWriteOperations() : hostEditOperations();
  return {
    ...definition,
    execute: async (toolCallId, params, signal, onUpdate, ctx) => {
      const args = params as Record<string, unknown>;
      const requested = String(args.path ?? "");
      if (sandbox.sandboxed) {
        const { viewPath } = locateInView(view, requested, "write");
        const operations =
          kind === "write" ? sandboxWriteOperations(sandbox, signal) : sandboxEditOperations(sandbox, signal);
        // Absolute in the view: pi's cwd plays no part.
        const tool = piFileTool(kind, view.cwd, operations);
        return tool.execute(toolCallId, { ...args, path: viewPath } as never, signal, onUpdate, ctx);
      }
      const { hostPath, viewPath } = await resolveInView(view, requested, "write");
      const tool = piFileTool(kind, view.cwd, hostOperations);
      try {
        const result = await tool.execute(
          toolCallId,
          { ...args, path: hostPath } as never,
          signal,
          onUpdate,
          ctx,
        );
        if (hostPath === viewPath) return result;
        // pi names the file it wrote by the path it was given: the model knows it by its path in the view.
        return {
          ...result,
          content: result.content.map((block) =>
            block.type === "text" ? { ...block, text: replaceAll(block.text, hostPath, viewPath) } : block,
          ),
        };
      } catch (error) {
        if (hostPath === viewPath || !(error instanceof Error)) throw error;
        throw new Error(replaceAll(error.message, hostPath, viewPath));
      }
    },
  };
}

// The kernel's own tools' schemas, built once: typebox construction is most of what making these tools costs,
// and a schema is plain data no call changes.
const MESSAGE_PARAMETERS = Type.Object({
  text: Type.String({ description: "The message text" }),
  target: Type.Optional(Type.String({ description: "A recipient other than the current conversation" })),
});
const SESSIONS_LIST_PARAMETERS = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: "At most this many" })),
});
const SESSIONS_HISTORY_PARAMETERS = Type.Object({
  sessionKey: Type.String({ description: "The session key, as sessions_list shows it" }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: "Last N messages" })),
});

function messageTool(sink: MessageSink, onSent: ((text: string) => void) | undefined): AnyToolDefinition {
  return asDefinition(
    defineTool({
      name: "message",
      label: "message",
      description:
        "Send a message to the user now, through the conversation's channel. Do not repeat the same text in your reply.",
      parameters: MESSAGE_PARAMETERS,
      execute: async (_toolCallId, params) => {
        if (params.text.trim() === "") throw new Error("message text is empty");
        const sent = await sink.send({
          text: params.text,
          ...(params.target === undefined ? {} : { target: params.target }),
        });
        onSent?.(params.text);
        return {
          content: [{ type: "text", text: `sent${sent.messageId ? ` (id ${sent.messageId})` : ""}` }],
          details: { messageId: sent.messageId ?? null },
        };
      },
    }),
  );
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : ""))
    .join("");
}

function sessionsListTool(store: SessionStore, agentId: string): AnyToolDefinition {
  return asDefinition(
    defineTool({
      name: "sessions_list",
      label: "sessions_list",
      description: "List this agent's sessions, most recently active first.",
      parameters: SESSIONS_LIST_PARAMETERS,
      execute: async (_toolCallId, params) => {
        const sessions = (await store.sessions.list(agentId)).slice(0, params.limit ?? 50);
        const lines = sessions.map(
          (session) =>
            `${session.sessionKey}\tsession ${session.sessionId}\tupdated ${new Date(session.updatedAt).toISOString()}`,
        );
        return {
          content: [{ type: "text", text: lines.length > 0 ? lines.join("\n") : "(no sessions)" }],
          details: { count: sessions.length },
        };
      },
    }),
  );
}

function sessionsHistoryTool(store: SessionStore, agentId: string): AnyToolDefinition {
  return asDefinition(
    defineTool({
      name: "sessions_history",
      label: "sessions_history",
      description: "Read the recent user and assistant messages of one of this agent's sessions.",
      parameters: SESSIONS_HISTORY_PARAMETERS,
      execute: async (_toolCallId, params) => {
        const session = await store.sessions.get({ agentId, sessionKey: params.sessionKey });
        if (!session) throw new Error(`no session "${params.sessionKey}" for agent "${agentId}"`);
        await store.loadTranscript(agentId, session.sessionId);
        if (!store.hasTranscript(agentId, session.sessionId)) {
          return { content: [{ type: "text", text: "(no messages)" }], details: { count: 0 } };
        }
        const messages = store
          .openTranscript(agentId, session.sessionId)
          .getBranch()
          .flatMap((entry: TranscriptEntry) => {
            if (entry.type !== "message") return [];
            const message = entry.message as { role?: string; content?: unknown };
            if (message.role !== "user" && message.role !== "assistant") return [];
            const text = textOf(message.content).trim();
            return text ? [`${message.role}: ${text}`] : [];
          })
          .slice(-(params.limit ?? DEFAULT_HISTORY_LIMIT));
        return {
          content: [{ type: "text", text: messages.length > 0 ? messages.join("\n") : "(no messages)" }],
          details: { count: messages.length },
        };
      },
    }),
  );
}

/** The default tools that depend on nothing of a turn (everything but `message`), before policy. */
function buildSharedTools(options: DefaultToolsOptions): AnyToolDefinition[] {
  const sandbox = options.sandbox ?? hostToolSandbox(options.workspaceDir);
  const view: PathView = { cwd: sandbox.cwd, mounts: sandbox.mounts };
  return [
    asDefinition(
      createBoundedReadTool(view, sandbox.sandboxed ? { source: sandboxReadSource(sandbox, view) } : {}),
    ),
    fileToolInView("write", sandbox, view),
    fileToolInView("edit", sandbox, view),
    execTool(
      sandbox,
      options.execTimeoutSeconds ?? DEFAULT_EXEC_TIMEOUT_SECONDS,
      options.execMaxOutputBytes ?? DEFAULT_EXEC_MAX_OUTPUT_BYTES,
    ),
    sessionsListTool(options.store, options.agentId),
    sessionsHistoryTool(options.store, options.agentId),
    ...(options.webFetch?.enabled === false ? [] : [webFetchTool(options.webFetch ?? {})]),
    ...(options.applyPatch === false ? [] : [applyPatchTool(sandbox, view)]),
    ...(options.memory === true ? memoryToolsIn(options, sandbox) : []),
  ];
}

/**
 * The memory tools over the memory files of the directory the tools work in: on the host the workspace, in a
 * sandbox the host directory its working directory is mounted from. None when no mount holds it (nothing to
 * say where the files are). The index (and the agent database) is made on the first memory call.
 */
function memoryToolsIn(options: DefaultToolsOptions, sandbox: ToolSandbox): AnyToolDefinition[] {
  const root = hostDirectoryOf(sandbox);
  if (root === undefined) return [];
  return memoryTools(() => new MemoryIndex(memoryDatabaseFor(options.store, options.agentId), root));
}

/** The host directory the sandbox's working directory is (the innermost mount holding it), or undefined. */
function hostDirectoryOf(sandbox: ToolSandbox): string | undefined {
  let best: { readonly path: string; readonly hostPath: string } | undefined;
  for (const mount of sandbox.mounts) {
    const inside = relative(mount.path, sandbox.cwd);
    if (inside === ".." || inside.startsWith("../") || isAbsolute(inside)) continue;
    if (best === undefined || mount.path.length > best.path.length) best = mount;
  }
  return best === undefined ? undefined : join(best.hostPath, relative(best.path, sandbox.cwd));
}

/** The order the tools are given in (and explained in). */
const TOOL_ORDER = [
  "read",
  "write",
  "edit",
  "exec",
  "sessions_list",
  "sessions_history",
  "web_fetch",
  "apply_patch",
  "memory_search",
  "memory_get",
  "process",
  "message",
];
const orderOf = (tool: AnyToolDefinition): number => {
  const index = TOOL_ORDER.indexOf(tool.name);
  return index < 0 ? TOOL_ORDER.length : index;
};
const inToolOrder = (tools: AnyToolDefinition[]): AnyToolDefinition[] =>
  tools.sort((a, b) => orderOf(a) - orderOf(b));

/**
 * The tools of one session: `exec` with its background mode (over the shared foreground `exec`) and
 * `process`, both over the session's background commands. `processAllowed` false: the policy denies
 * `process`, and `exec` stays in the foreground (OpenClaw ignores `yieldMs` / `background` then).
 */
function sessionTools(
  foregroundExec: AnyToolDefinition,
  options: DefaultToolsOptions,
  processAllowed: boolean,
): AnyToolDefinition[] {
  if (!processAllowed) return [foregroundExec];
  const sandbox = options.sandbox ?? hostToolSandbox(options.workspaceDir);
  const settings = {
    scope: () =>
      processScopeFor(options.agentId, options.sessionId ?? "(no session)", {
        ...DEFAULT_PROCESS_LIMITS,
        ...(options.background?.limits ?? {}),
      }),
    sandbox,
    timeoutSeconds: options.execTimeoutSeconds ?? DEFAULT_EXEC_TIMEOUT_SECONDS,
    maxOutputBytes: options.execMaxOutputBytes ?? DEFAULT_EXEC_MAX_OUTPUT_BYTES,
    defaultYieldMs: options.background?.defaultYieldMs,
  };
  return [backgroundExecTool(foregroundExec, settings), processTool(settings)];
}

const isExec = (tool: AnyToolDefinition): boolean => tool.name === "exec";

/** Every default tool, before policy. */
export function buildDefaultTools(options: DefaultToolsOptions): AnyToolDefinition[] {
  const shared = buildSharedTools(options);
  const foregroundExec = shared.find(isExec);
  const tools = [
    ...shared.filter((tool) => !isExec(tool)),
    ...(foregroundExec ? sessionTools(foregroundExec, options, true) : []),
  ];
  if (options.messageSink) tools.push(messageTool(options.messageSink, options.onMessageSent));
  return inToolOrder(tools);
}

/** The tools a run gets: the policy's allowed ones, each checked again at every call. */
export function applyToolPolicy(
  tools: readonly AnyToolDefinition[],
  policy: ToolPolicy,
): AnyToolDefinition[] {
  return enforceToolPolicyOnAll(policy.filter(tools), { policy });
}

/** Distinct workspaces, agents and exec limits whose shared tools are kept per store. */
const MAX_SHARED_TOOL_SETS = 64;
/** Sessions whose `exec` / `process` are kept per shared set and policy. */
const MAX_SESSION_TOOL_SETS = 1024;

/**
 * The tools of a turn, policy applied: what `applyToolPolicy(buildDefaultTools(options), policy)` returns,
 * with everything but `message`, `exec` and `process` built and wrapped once and reused by every turn of the
 * same store, workspace, agent, exec limits and policy object. Those tools hold no state of a turn (they read
 * the store and the workspace when called; the policy wrapper asks the same policy at every call), so sharing
 * them is invisible to a turn; `message` closes over the turn's sink and listener, `exec` and `process` over
 * the session's background commands (a thin wrapper of the shared foreground `exec`), made for each turn.
 */
export class DefaultToolCache {
  readonly #shared = new WeakMap<SessionStore, Map<string, readonly AnyToolDefinition[]>>();
  readonly #wrapped = new WeakMap<ToolPolicy, WeakMap<readonly AnyToolDefinition[], AnyToolDefinition[]>>();
  /** Each session's `exec` and `process`, wrapped, per policy and shared set (kept: a warm session needs the same objects). */
  readonly #sessionWrapped = new WeakMap<
    ToolPolicy,
    WeakMap<readonly AnyToolDefinition[], Map<string, AnyToolDefinition[]>>
  >();

  toolsFor(options: DefaultToolsOptions, policy: ToolPolicy): AnyToolDefinition[] {
    const shared = this.#sharedFor(options);
    let byShared = this.#wrapped.get(policy);
    if (byShared === undefined) {
      byShared = new WeakMap();
      this.#wrapped.set(policy, byShared);
    }
    let wrapped = byShared.get(shared);
    if (wrapped === undefined) {
      wrapped = applyToolPolicy(
        shared.filter((tool) => !isExec(tool)),
        policy,
      );
      byShared.set(shared, wrapped);
    }
    const perTurn = options.messageSink
      ? applyToolPolicy([messageTool(options.messageSink, options.onMessageSent)], policy)
      : [];
    return inToolOrder([...wrapped, ...this.#sessionToolsFor(shared, options, policy), ...perTurn]);
  }

  #sessionToolsFor(
    shared: readonly AnyToolDefinition[],
    options: DefaultToolsOptions,
    policy: ToolPolicy,
  ): AnyToolDefinition[] {
    const foregroundExec = shared.find(isExec);
    if (foregroundExec === undefined) return [];
    let byShared = this.#sessionWrapped.get(policy);
    if (byShared === undefined) {
      byShared = new WeakMap();
      this.#sessionWrapped.set(policy, byShared);
    }
    let bySession = byShared.get(shared);
    if (bySession === undefined) {
      bySession = new Map();
      byShared.set(shared, bySession);
    }
    const key = JSON.stringify([options.sessionId ?? null, options.background ?? null]);
    let tools = bySession.get(key);
    if (tools === undefined) {
      tools = applyToolPolicy(sessionTools(foregroundExec, options, policy.isAllowed("process")), policy);
      if (bySession.size >= MAX_SESSION_TOOL_SETS) bySession.clear();
      bySession.set(key, tools);
    }
    return tools;
  }

  #sharedFor(options: DefaultToolsOptions): readonly AnyToolDefinition[] {
    let byKey = this.#shared.get(options.store);
    if (byKey === undefined) {
      byKey = new Map();
      this.#shared.set(options.store, byKey);
    }
    const key = [
      options.workspaceDir,
      options.agentId,
      options.execTimeoutSeconds ?? DEFAULT_EXEC_TIMEOUT_SECONDS,
      options.execMaxOutputBytes ?? DEFAULT_EXEC_MAX_OUTPUT_BYTES,
      sandboxKey(options.sandbox),
      JSON.stringify(options.webFetch ?? {}),
      options.applyPatch === false ? "no-apply-patch" : "apply-patch",
      options.memory === true ? "memory" : "no-memory",
    ].join("\u0000");
    let tools = byKey.get(key);
    if (tools === undefined) {
      tools = buildSharedTools(options);
      if (byKey.size >= MAX_SHARED_TOOL_SETS) byKey.clear();
      byKey.set(key, tools);
    }
    return tools;
  }
}
