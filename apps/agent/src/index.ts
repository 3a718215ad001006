// @agent-kernel/agent (in progress).
export {};
