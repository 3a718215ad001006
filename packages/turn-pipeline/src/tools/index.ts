// The executor's default tools: workspace-confined file tools, exec, message, sessions_list/history.
export {
  applyToolPolicy,
  buildDefaultTools,
  capOutput,
  DEFAULT_EXEC_MAX_OUTPUT_BYTES,
  DEFAULT_EXEC_TIMEOUT_SECONDS,
  DefaultToolCache,
  type DefaultToolsOptions,
  type MessageSink,
} from "./default-tools.ts";
export { resolveInsideWorkspace, WorkspacePathError } from "./workspace-paths.ts";
