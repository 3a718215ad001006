// The one boundary with pi's tool types. Owns: the minimal structural shapes
// of pi-agent-core's AgentTool and pi-coding-agent's ToolDefinition that this
// package relies on (the layer check keeps pi itself out of src; the tests
// prove real pi tools fit these shapes). Does not own: any behaviour.

/** What a tool returns: pi's AgentToolResult, reduced to what the wrapper passes through. */
export interface ToolResultLike {
  readonly content: readonly unknown[];
  readonly details: unknown;
}

/**
 * The part both pi tool kinds share: a name and `execute(toolCallId, params,
 * signal, ...rest)`. AgentTool's rest is `onUpdate`; ToolDefinition's is
 * `onUpdate, ctx`. `params: never` accepts any parameter type (a wrapper
 * passes them through untouched).
 */
export interface ExecutableToolLike {
  readonly name: string;
  execute(toolCallId: string, params: never, signal?: AbortSignal, ...rest: never[]): Promise<ToolResultLike>;
}

/** pi-agent-core `AgentTool`: `{name, label, description, parameters, execute(id, params, signal?, onUpdate?)}`. */
export interface AgentToolLike extends ExecutableToolLike {
  readonly label: string;
  readonly description: string;
  readonly parameters: unknown;
}

/** pi-coding-agent `ToolDefinition`: an AgentTool whose execute also receives the extension context. */
export interface ToolDefinitionLike extends AgentToolLike {
  readonly promptSnippet?: string;
  readonly promptGuidelines?: readonly string[];
}
