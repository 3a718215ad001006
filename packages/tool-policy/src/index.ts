// @agent-kernel/tool-policy (in progress).
export {};
