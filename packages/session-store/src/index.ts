// @agent-kernel/session-store: sessions, transcript tree, runs and auth state.
export * from "./history/index.ts";
export * from "./legacy/index.ts";
