// `sessions_spawn` and `sessions_send`: the tools one agent uses to start a subagent run and to message
// another session, as OpenClaw's sessions tools (JSON results with a `status`). Owns: their schemas, the
// checks of their arguments and the shape of their results. Does not own: running anything — the caller
// passes the `SubagentSpawner` / `SessionMessenger` (the kernel's subagents.ts runs turns through the
// kernel) — nor whether a turn gets them (the tool policy, applied by the executor as for every tool).
import { Type } from "@earendil-works/pi-ai";
import { defineTool, type ToolDefinition } from "@earendil-works/pi-coding-agent";

/** What `sessions_spawn` asks for: a task for a new subagent session. */
export interface SpawnRequest {
  readonly task: string;
  readonly label?: string | undefined;
  /** Another agent's id (must be allowed); default the caller's agent. */
  readonly agentId?: string | undefined;
  /** The child run's timeout (seconds); default the child agent's. */
  readonly runTimeoutSeconds?: number | undefined;
}

/** `sessions_spawn`'s answer: accepted (the child runs in the background) or refused with the reason. */
export type SpawnAnswer =
  | { readonly status: "accepted"; readonly childSessionKey: string; readonly runId: string }
  | { readonly status: "forbidden" | "error"; readonly error: string };

/** Starts subagent runs for one parent run. */
export interface SubagentSpawner {
  spawn(request: SpawnRequest): Promise<SpawnAnswer>;
}

/** What `sessions_send` asks for: a message into another session, waiting up to `timeoutSeconds` for its reply. */
export interface SendRequest {
  readonly sessionKey: string;
  readonly message: string;
  /** 0: do not wait (the answer is `accepted`). Default 30. */
  readonly timeoutSeconds?: number | undefined;
}

/** `sessions_send`'s answer. */
export type SendAnswer =
  | {
      readonly status: "ok" | "accepted" | "timeout" | "error";
      readonly runId: string;
      readonly sessionKey: string;
      readonly reply?: string;
      readonly error?: string;
    }
  | { readonly status: "forbidden"; readonly sessionKey: string; readonly error: string };

/** Sends messages from one run into other sessions. */
export interface SessionMessenger {
  send(request: SendRequest): Promise<SendAnswer>;
}

const SPAWN_PARAMETERS = Type.Object({
  task: Type.String({
    description: "What the subagent should do; it sees nothing else of this conversation",
  }),
  label: Type.Optional(Type.String({ description: "A short name for the task" })),
  agentId: Type.Optional(Type.String({ description: "Spawn under another agent (when allowed)" })),
  runTimeoutSeconds: Type.Optional(
    Type.Integer({ minimum: 0, description: "Stop the subagent after this many seconds (0 = no limit)" }),
  ),
});

const SEND_PARAMETERS = Type.Object({
  sessionKey: Type.String({ description: "The target session key, as sessions_list shows it" }),
  message: Type.String({ description: "The message to send" }),
  timeoutSeconds: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 600, description: "Wait this long for the reply (0 = do not wait)" }),
  ),
});

/** The longest task or message accepted (characters): anything a chat message can reach is bounded. */
export const MAX_AGENT_MESSAGE_CHARS = 100_000;

function jsonResult<T extends object>(value: T) {
  return { content: [{ type: "text" as const, text: JSON.stringify(value, null, 2) }], details: value };
}

function checkText(name: string, text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") throw new Error(`${name} is empty`);
  if (text.length > MAX_AGENT_MESSAGE_CHARS)
    throw new Error(`${name} is ${text.length} characters; at most ${MAX_AGENT_MESSAGE_CHARS}`);
  return text;
}

/** `sessions_spawn` over `spawner`: starts a background subagent run; its result is announced back later. */
export function sessionsSpawnTool(spawner: SubagentSpawner): ToolDefinition {
  return defineTool({
    name: "sessions_spawn",
    label: "sessions_spawn",
    description:
      "Spawn a background subagent run in its own isolated session. Returns at once with the child's session " +
      "key and run id; when the subagent finishes, its result is announced back to this session.",
    parameters: SPAWN_PARAMETERS,
    execute: async (_toolCallId, params) => {
      const answer = await spawner.spawn({
        task: checkText("task", params.task),
        label: params.label?.trim() || undefined,
        agentId: params.agentId?.trim() || undefined,
        runTimeoutSeconds: params.runTimeoutSeconds,
      });
      return jsonResult(answer);
    },
  }) as unknown as ToolDefinition;
}

/** `sessions_send` over `messenger`: runs a turn of the target session with the message and returns its reply. */
export function sessionsSendTool(messenger: SessionMessenger): ToolDefinition {
  return defineTool({
    name: "sessions_send",
    label: "sessions_send",
    description:
      "Send a message into another session: its agent runs a turn with it. Waits up to timeoutSeconds " +
      "(default 30) and returns the reply; 0 returns at once.",
    parameters: SEND_PARAMETERS,
    execute: async (_toolCallId, params) => {
      const sessionKey = params.sessionKey.trim();
      if (sessionKey === "") throw new Error("sessionKey is empty");
      const answer = await messenger.send({
        sessionKey,
        message: checkText("message", params.message),
        timeoutSeconds: params.timeoutSeconds,
      });
      return jsonResult(answer);
    },
  }) as unknown as ToolDefinition;
}
