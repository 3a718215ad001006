// @agent-kernel/turn-pipeline: one agent turn through pi.
export * from "./executor/index.ts";
export * from "./memory/index.ts";
export * from "./session-manager/index.ts";
export * from "./skills/index.ts";
export * from "./streaming/index.ts";
// The agent-to-agent tools (`sessions_spawn`, `sessions_send`) over a caller's spawner and messenger.
export {
  MAX_AGENT_MESSAGE_CHARS,
  type SendAnswer,
  type SendRequest,
  type SessionMessenger,
  type SpawnAnswer,
  type SpawnRequest,
  type SubagentSpawner,
  sessionsSendTool,
  sessionsSpawnTool,
} from "./tools/index.ts";
