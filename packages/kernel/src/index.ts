// @agent-kernel/kernel (in progress).
export {};
