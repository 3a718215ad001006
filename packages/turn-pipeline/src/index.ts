// @agent-kernel/turn-pipeline: one agent turn through pi.
export * from "./session-manager/index.ts";
export * from "./streaming/index.ts";
