// The `exec` tool: pi's bash tool under OpenClaw's name, with its commands run by the turn's sandbox engine
// (`bwrap` in a sandboxed session, `host` otherwise) instead of pi's local shell. Owns: the pi
// `BashOperations` over a `ToolSandbox` (the scrubbed environment, the view's cwd, the engine's limits), the
// timeout the model may ask for (at most the configured one), and capping the output kept for the model.
// Does not own: containment (the engine) or which sessions are sandboxed (runtime-resolver).
import { constants as osConstants } from "node:os";
import {
  type AgentToolResult,
  type BashOperations,
  createBashToolDefinition,
  type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import type { ToolSandbox } from "./tool-sandbox.ts";

/** Keeps the last `maxBytes` of a text, saying how much was cut. */
export function capOutput(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return text;
  const buffer = Buffer.from(text, "utf8");
  // Start on a character boundary: skip UTF-8 continuation bytes.
  let start = bytes - maxBytes;
  while (start < bytes && ((buffer[start] ?? 0) & 0xc0) === 0x80) start++;
  return `[output capped: showing the last ${bytes - start} of ${bytes} bytes]\n${buffer.subarray(start).toString("utf8")}`;
}

/** pi's bash operations, run by the sandbox's engine. */
export function sandboxBashOperations(sandbox: ToolSandbox): BashOperations {
  return {
    exec: async (command, _cwd, { onData, signal, timeout }) => {
      // pi passes the model's timeout in seconds (already clamped by the tool); the sandbox's own wall time
      // bounds a sandboxed command whatever was asked.
      const askedMs = typeof timeout === "number" && timeout > 0 ? timeout * 1000 : sandbox.limits.timeoutMs;
      const timeoutMs = sandbox.sandboxed ? Math.min(askedMs, sandbox.limits.timeoutMs) : askedMs;
      const result = await sandbox.engine.run({
        command,
        cwd: sandbox.cwd,
        env: sandbox.env,
        mounts: sandbox.mounts,
        network: sandbox.network,
        limits: { ...sandbox.limits, timeoutMs },
        signal,
        onData,
      });
      if (result.aborted) throw new Error("aborted");
      if (result.timedOut) throw new Error(`timeout:${Math.round(timeoutMs / 1000)}`);
      if (result.outputLimited) {
        onData(
          Buffer.from(
            `\n[killed: the command wrote ${result.outputBytes} bytes, past the limit of ${sandbox.limits.maxOutputBytes}]`,
          ),
        );
      }
      const signalNumber = result.signal ? (osConstants.signals[result.signal] ?? 0) : 0;
      return { exitCode: result.exitCode ?? (result.signal ? 128 + signalNumber : 1) };
    },
  };
}

export function execTool(
  sandbox: ToolSandbox,
  timeoutSeconds: number,
  maxOutputBytes: number,
): ToolDefinition {
  const bash = createBashToolDefinition(sandbox.cwd, {
    operations: sandboxBashOperations(sandbox),
    exposeSessionEnvironment: false,
    // pi starts from the gateway's whole environment: commands get only the scrubbed one.
    spawnHook: (context) => ({ ...context, cwd: sandbox.cwd, env: { ...sandbox.env } }),
  }) as unknown as ToolDefinition;
  const original = bash.execute.bind(bash);
  const where = sandbox.sandboxed
    ? `Runs in a sandbox (working directory ${sandbox.cwd}; ${sandbox.network ? "network on" : "no network"}).`
    : "Runs in the workspace directory.";
  return {
    ...bash,
    name: "exec",
    label: "exec",
    description: `${bash.description} ${where} At most ${timeoutSeconds} s (default ${timeoutSeconds} s); output keeps the last ${maxOutputBytes} bytes.`,
    execute: async (toolCallId, params, signal, onUpdate, ctx) => {
      const args = params as { command: string; timeout?: number };
      const asked = typeof args.timeout === "number" && args.timeout > 0 ? args.timeout : timeoutSeconds;
      const timeout = Math.min(asked, timeoutSeconds);
      try {
        const result = (await original(
          toolCallId,
          { command: args.command, timeout } as never,
          signal,
          onUpdate,
          ctx,
        )) as AgentToolResult<unknown>;
        return {
          ...result,
          content: result.content.map((block) =>
            block.type === "text" ? { ...block, text: capOutput(block.text, maxOutputBytes) } : block,
          ),
        };
      } catch (error) {
        throw new Error(capOutput(error instanceof Error ? error.message : String(error), maxOutputBytes));
      }
    },
  };
}
