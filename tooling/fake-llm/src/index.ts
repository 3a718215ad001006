// @agent-kernel/fake-llm (in progress).
export {};
