// @agent-kernel/turn-pipeline: one agent turn through pi.
export * from "./executor/index.ts";
export * from "./memory/index.ts";
export * from "./session-manager/index.ts";
export * from "./skills/index.ts";
export * from "./streaming/index.ts";
