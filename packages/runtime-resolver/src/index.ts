// @agent-kernel/runtime-resolver (in progress).
export {};
