// The `process` tool and `exec`'s background mode, over one session's background commands (process-registry.ts).
// Owns: what the model sends and reads — `exec` with `background: true` (start and return at once) or `yieldMs`
// (wait that long; a command still running then keeps running and the answer is its session id, as OpenClaw),
// and `process` actions list / poll / log / write / kill / clear / remove. Does not own: the foreground `exec`
// (exec-tool.ts), the registry's limits and killing (process-registry.ts), or the policy (a turn whose policy
// denies `process` gets a foreground-only `exec`, default-tools.ts).
import { Type } from "@earendil-works/pi-ai";
import { type AgentToolResult, defineTool, type ToolDefinition } from "@earendil-works/pi-coding-agent";
import { capOutput } from "./exec-tool.ts";
import type { BackgroundProcess, ProcessScope } from "./process-registry.ts";
import type { ToolSandbox } from "./tool-sandbox.ts";

/** Longest a `process poll` waits for output (OpenClaw clamps to 30 s). */
const MAX_POLL_WAIT_MS = 30_000;
/** Lines `process log` shows when not asked for a range. */
const DEFAULT_LOG_LINES = 200;

/** `exec`'s parameters: pi's bash ones plus OpenClaw's background controls. */
export const EXEC_PARAMETERS = Type.Object({
  command: Type.String({ description: "Bash command to execute" }),
  timeout: Type.Optional(
    Type.Number({ description: "Timeout in seconds (optional, capped by the configured one)" }),
  ),
  yieldMs: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "Wait this many milliseconds; a command still running then keeps running in the background and you get its sessionId for the process tool",
    }),
  ),
  background: Type.Optional(
    Type.Boolean({
      description: "Start in the background at once and return its sessionId for the process tool",
    }),
  ),
});

const PROCESS_PARAMETERS = Type.Object({
  action: Type.Union(
    ["list", "poll", "log", "write", "kill", "clear", "remove"].map((action) => Type.Literal(action)),
    {
      description:
        "list | poll (new output, status) | log (kept output) | write (stdin) | kill | clear | remove",
    },
  ),
  sessionId: Type.Optional(Type.String({ description: "The background process, as exec returned it" })),
  data: Type.Optional(Type.String({ description: "write: text for the process's standard input" })),
  eof: Type.Optional(Type.Boolean({ description: "write: close the standard input after the data" })),
  timeout: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: "poll: wait up to this many milliseconds for new output (max 30000)",
    }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: "log: first line (0-based)" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: "log: number of lines" })),
});

const text = (value: string, details: Record<string, unknown>): AgentToolResult<unknown> => ({
  content: [{ type: "text", text: value }],
  details,
});

function statusLine(process: BackgroundProcess): string {
  switch (process.status) {
    case "running":
      return `Process ${process.id} is still running.`;
    case "exited":
      return `Process ${process.id} exited with code ${process.exitCode ?? "?"}${process.note ? ` (${process.note})` : ""}.`;
    case "killed":
      return `Process ${process.id} was killed (${process.note ?? "killed"}).`;
    case "timed_out":
      return `Process ${process.id} was killed at its time limit.`;
    case "failed":
      return `Process ${process.id} could not run: ${process.note ?? "unknown error"}`;
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}

/** What the process tool and exec's background mode need of the turn. */
export interface BackgroundSettings {
  /**
   * The session's background commands, looked up at each call: a session that ended has a new, empty scope
   * the next time, even for tools kept between turns.
   */
  readonly scope: () => ProcessScope;
  readonly sandbox: ToolSandbox;
  /** The longest a command may run, in seconds (`exec`'s configured timeout). */
  readonly timeoutSeconds: number;
  /** Characters of output an answer shows (`exec`'s output cap). */
  readonly maxOutputBytes: number;
  /** `tools.exec.backgroundMs`: the yield of a call that gives none; absent: such a call runs in the foreground. */
  readonly defaultYieldMs?: number | undefined;
}

/**
 * `exec` with OpenClaw's background mode over the foreground `exec` (`foreground`, whose schema, description
 * and behaviour a call without `background` / `yieldMs` keeps).
 */
export function backgroundExecTool(foreground: ToolDefinition, settings: BackgroundSettings): ToolDefinition {
  const { sandbox, timeoutSeconds, maxOutputBytes } = settings;
  return {
    ...foreground,
    parameters: EXEC_PARAMETERS,
    description: `${foreground.description} With background: true the command starts in the background; with yieldMs it runs in the background once that time has passed. Either way you get a sessionId to poll, read, write to or kill with the process tool (at most ${settings.scope().limits.maxRunning} at once).`,
    execute: async (toolCallId, params, signal, onUpdate, ctx) => {
      const args = params as { command: string; timeout?: number; yieldMs?: number; background?: boolean };
      const yieldMs = args.background === true ? 0 : (args.yieldMs ?? settings.defaultYieldMs);
      if (yieldMs === undefined) {
        return foreground.execute(
          toolCallId,
          { command: args.command, timeout: args.timeout } as never,
          signal,
          onUpdate,
          ctx,
        );
      }
      const asked = typeof args.timeout === "number" && args.timeout > 0 ? args.timeout : timeoutSeconds;
      const scope = settings.scope();
      const process = scope.start(sandbox, args.command, Math.min(asked, timeoutSeconds) * 1000);
      if (yieldMs > 0) {
        // Until it yields the command is the call's: aborting the turn kills it.
        const onAbort = () => process.kill("the turn was aborted");
        signal?.addEventListener("abort", onAbort, { once: true });
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([process.done, new Promise((resolve) => (timer = setTimeout(resolve, yieldMs)))]);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (!process.running) {
          await process.done;
          const { text: output } = process.output();
          scope.remove(process.id);
          const shown = capOutput(output.trim() === "" ? "(no output)" : output, maxOutputBytes);
          if (process.status === "exited" && process.exitCode === 0) {
            return text(shown, { status: "completed", exitCode: 0 });
          }
          throw new Error(`${shown}\n\n${statusLine(process)}`);
        }
      }
      const { text: sofar } = process.takeNew();
      return text(
        [
          `Command still running in the background (sessionId ${process.id}). Use the process tool with this sessionId to poll its output, write to its input or kill it.`,
          ...(sofar.trim() === "" ? [] : ["Output so far:", capOutput(sofar, maxOutputBytes)]),
        ].join("\n"),
        { status: "running", sessionId: process.id },
      );
    },
  };
}

function requireId(sessionId: string | undefined, action: string): string {
  if (sessionId === undefined || sessionId.trim() === "") {
    throw new Error(`process ${action} needs the sessionId exec returned`);
  }
  return sessionId.trim();
}

/** The `process` tool over the session's background commands. */
export function processTool(settings: BackgroundSettings): ToolDefinition {
  const { maxOutputBytes } = settings;
  return defineTool({
    name: "process",
    label: "process",
    description:
      "Manage background commands started by exec (background: true or yieldMs): list them, poll one for new output and its status (timeout waits up to 30000 ms for output), read its kept output (log, by lines: offset/limit, the last 200 by default), write to its standard input (data, eof), kill it, clear a finished one, or remove one (kill if running, else clear). Only this session's commands are visible.",
    parameters: PROCESS_PARAMETERS,
    execute: async (_toolCallId, params) => {
      const scope = settings.scope();
      switch (params.action) {
        case "list": {
          const all = scope.list();
          const now = Date.now();
          const lines = all.map(
            (process) =>
              `${process.id}\t${process.status}${process.status === "exited" ? ` (${process.exitCode})` : ""}\t${seconds((process.endedAt ?? now) - process.startedAt)}\t${process.command.replace(/\s+/g, " ").slice(0, 120)}`,
          );
          return text(lines.length > 0 ? lines.join("\n") : "(no background processes)", {
            count: all.length,
            running: all.filter((process) => process.running).length,
          });
        }
        case "poll": {
          const process = scope.get(requireId(params.sessionId, "poll"));
          await process.waitForChange(Math.min(params.timeout ?? 0, MAX_POLL_WAIT_MS));
          const { text: fresh, missed } = process.takeNew();
          const parts = [
            ...(missed > 0 ? [`[${missed} characters of output were dropped before this poll]`] : []),
            fresh === "" ? "(no new output)" : capOutput(fresh, maxOutputBytes),
            statusLine(process),
          ];
          return text(parts.join("\n"), { status: process.status, exitCode: process.exitCode });
        }
        case "log": {
          const process = scope.get(requireId(params.sessionId, "log"));
          const { text: kept, dropped } = process.output();
          const lines = kept.split("\n");
          if (lines.at(-1) === "") lines.pop();
          const start =
            params.offset ?? (params.limit === undefined ? Math.max(0, lines.length - DEFAULT_LOG_LINES) : 0);
          const end =
            params.limit === undefined ? lines.length : Math.min(lines.length, start + params.limit);
          const page = lines.slice(start, end);
          const parts = [
            ...(dropped > 0
              ? [
                  `[the first ${dropped} characters were dropped: the log keeps the newest ${scope.limits.maxOutputChars}]`,
                ]
              : []),
            `[lines ${start}-${Math.max(start, end - 1)} of ${lines.length}]`,
            capOutput(page.join("\n"), maxOutputBytes),
            statusLine(process),
          ];
          return text(parts.join("\n"), { status: process.status, lines: lines.length });
        }
        case "write": {
          const process = scope.get(requireId(params.sessionId, "write"));
          process.write(params.data ?? "", params.eof === true);
          return text(
            `wrote ${Buffer.byteLength(params.data ?? "", "utf8")} bytes to ${process.id}${params.eof ? " and closed its input" : ""}`,
            { status: process.status },
          );
        }
        case "kill": {
          const process = scope.get(requireId(params.sessionId, "kill"));
          if (!process.running) return text(statusLine(process), { status: process.status });
          process.kill("killed by the process tool");
          await process.done;
          return text(statusLine(process), { status: process.status });
        }
        case "clear": {
          const id = requireId(params.sessionId, "clear");
          scope.remove(id);
          return text(`cleared ${id}`, {});
        }
        case "remove": {
          const process = scope.get(requireId(params.sessionId, "remove"));
          if (process.running) {
            process.kill("removed by the process tool");
            await process.done;
          }
          scope.remove(process.id);
          return text(`removed ${process.id}`, {});
        }
        default:
          throw new Error(`unknown process action "${String(params.action)}"`);
      }
    },
  }) as unknown as ToolDefinition;
}
