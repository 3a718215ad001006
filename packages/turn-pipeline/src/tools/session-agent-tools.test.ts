// sessions_spawn / sessions_send over a recording spawner and messenger: arguments checked before anything
// runs (untrusted model input), answers returned as JSON text with the same object in `details`.
import { describe, expect, it } from "vitest";
import {
  MAX_AGENT_MESSAGE_CHARS,
  type SendRequest,
  type SpawnRequest,
  sessionsSendTool,
  sessionsSpawnTool,
} from "./session-agent-tools.ts";

const call = (tool: ReturnType<typeof sessionsSpawnTool>, params: Record<string, unknown>) =>
  tool.execute("call_1", params as never, undefined, undefined, undefined as never);

describe("sessions_spawn", () => {
  it("passes a trimmed request to the spawner and answers with its JSON", async () => {
    const seen: SpawnRequest[] = [];
    const tool = sessionsSpawnTool({
      spawn: async (request) => {
        seen.push(request);
        return { status: "accepted", childSessionKey: "agent:main:subagent:x", runId: "r1" };
      },
    });
    const result = await call(tool, { task: "do it", label: "  job ", agentId: " ", runTimeoutSeconds: 5 });
    expect(seen).toEqual([{ task: "do it", label: "job", agentId: undefined, runTimeoutSeconds: 5 }]);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({
      status: "accepted",
      childSessionKey: "agent:main:subagent:x",
      runId: "r1",
    });
    expect(result.details).toEqual({
      status: "accepted",
      childSessionKey: "agent:main:subagent:x",
      runId: "r1",
    });
  });

  it("refuses an empty or oversized task before the spawner is asked", async () => {
    let asked = 0;
    const tool = sessionsSpawnTool({
      spawn: async () => {
        asked += 1;
        return { status: "error", error: "unreachable" };
      },
    });
    await expect(call(tool, { task: "  " })).rejects.toThrow("task is empty");
    await expect(call(tool, { task: "x".repeat(MAX_AGENT_MESSAGE_CHARS + 1) })).rejects.toThrow(
      `task is ${MAX_AGENT_MESSAGE_CHARS + 1} characters; at most ${MAX_AGENT_MESSAGE_CHARS}`,
    );
    expect(asked).toBe(0);
  });
});

describe("sessions_send", () => {
  it("passes the message to the messenger and answers with its JSON; refuses an empty key or message", async () => {
    const seen: SendRequest[] = [];
    const tool = sessionsSendTool({
      send: async (request) => {
        seen.push(request);
        return { status: "ok", runId: "r2", sessionKey: request.sessionKey, reply: "pong" };
      },
    });
    const result = await call(tool, { sessionKey: " agent:main:other ", message: "ping", timeoutSeconds: 0 });
    expect(seen).toEqual([{ sessionKey: "agent:main:other", message: "ping", timeoutSeconds: 0 }]);
    expect(result.details).toEqual({
      status: "ok",
      runId: "r2",
      sessionKey: "agent:main:other",
      reply: "pong",
    });
    await expect(call(tool, { sessionKey: " ", message: "ping" })).rejects.toThrow("sessionKey is empty");
    await expect(call(tool, { sessionKey: "agent:main:other", message: "" })).rejects.toThrow(
      "message is empty",
    );
    expect(seen).toHaveLength(1);
  });
});
