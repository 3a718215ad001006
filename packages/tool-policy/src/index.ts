// @agent-kernel/tool-policy: which tools a run may use, and why. Pure, no I/O.
export {
  DEFAULT_TOOL_CATALOG,
  extendToolCatalog,
  OWNER_ONLY_TOOLS,
  SANDBOX_DEFAULT_ALLOW,
  SANDBOX_DEFAULT_DENY,
  SUBAGENT_DENY_ALWAYS,
  SUBAGENT_DENY_LEAF,
  type ToolCatalog,
  type ToolProfileId,
} from "./catalog.ts";
export {
  ABORTED_MESSAGE,
  type EnforceOptions,
  enforceToolPolicy,
  enforceToolPolicyOnAll,
  ToolPolicyBlockedError,
} from "./enforce.ts";
export {
  agentToolsSection,
  buildToolPolicyLayers,
  findProviderPolicy,
  type LayerKind,
  NON_OWNER_HOST_TOOLS,
  type PolicyLayer,
  subagentDepthFromSessionKey,
  type ToolPolicyContext,
} from "./layers.ts";
export { expandToolGroups, groupMembers, normalizeToolList, normalizeToolName } from "./names.ts";
export { OPENCLAW_CATALOG_VERSION } from "./openclaw-catalog.generated.ts";
export type {
  AgentToolLike,
  ExecutableToolLike,
  ToolDefinitionLike,
  ToolResultLike,
} from "./pi-tool-shapes.ts";
export {
  type CompiledPolicy,
  compilePolicy,
  isToolAllowedByPolicy,
  type PolicyEntry,
  type PolicyVerdict,
  type ToolPolicyRules,
} from "./policy.ts";
export {
  compileToolPolicy,
  explainToolPolicy,
  formatToolDecision,
  resolveToolPolicy,
  type ToolDecision,
  type ToolPolicy,
} from "./resolve.ts";
export {
  findUnsupportedSchemaKeywords,
  GEMINI_UNSUPPORTED_KEYWORDS,
  normalizeToolSchema,
  type SchemaFamily,
  schemaFamilyFor,
} from "./schema-normalize.ts";
export { type ToolPolicyIssue, type ToolPolicyIssueSeverity, validateToolPolicyConfig } from "./validate.ts";
