// The executor's default tools: workspace-confined file tools, apply_patch, exec and process, web_fetch,
// message, sessions_list/history.
export {
  applyToolPolicy,
  buildDefaultTools,
  DEFAULT_EXEC_MAX_OUTPUT_BYTES,
  DEFAULT_EXEC_TIMEOUT_SECONDS,
  DefaultToolCache,
  type DefaultToolsOptions,
  type MessageSink,
} from "./default-tools.ts";
export { capOutput, execTool, sandboxBashOperations } from "./exec-tool.ts";
export {
  describeMounts,
  hostPathView,
  type PathAccess,
  type PathMount,
  type PathView,
  type ResolvedPath,
  resolveInView,
} from "./path-view.ts";
export {
  DEFAULT_PROCESS_LIMITS,
  killAllBackgroundProcesses,
  killSessionProcesses,
  noteSessionTurn,
  type ProcessLimits,
} from "./process-registry.ts";
export {
  type BoundedReadDetails,
  type BoundedReadToolOptions,
  createBoundedReadTool,
  DEFAULT_LINE_COUNT_SCAN_BYTES,
  DEFAULT_MAX_IMAGE_BYTES,
} from "./read-tool.ts";
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
} from "./session-agent-tools.ts";
export {
  execEnvironment,
  prepareToolSandbox,
  type SandboxEngines,
  type ToolSandbox,
} from "./tool-sandbox.ts";
export { resolveInsideWorkspace, WorkspacePathError } from "./workspace-paths.ts";
