// @agent-kernel/fake-llm: a real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions and Anthropic
// Messages streaming wire formats, driven by scenarios (responses and faults), recording every request.
// Usage: `const llm = await startFakeLlm({ scenario })`, point a pi Model's baseUrl at
// `llm.baseUrlFor("openai" | "anthropic")`, assert on `llm.requests`, then `await llm.close()`.
export { OVERFLOW_TEXTS } from "./faults.ts";
export { loadScenarioFile, ScenarioError, validateScenario } from "./scenario.ts";
export { type FakeLlm, type FakeLlmOptions, startFakeLlm } from "./server.ts";
export { fault, reply, toolCall } from "./steps.ts";
export type {
  ContentBlock,
  DataStep,
  ErrorStep,
  FaultName,
  MalformedStep,
  OverflowVariant,
  RecordedRequest,
  ResetStep,
  ResponseFields,
  ResponseStep,
  RouteMatch,
  RouteRule,
  Scenario,
  StallStep,
  Step,
  StepFunction,
  StopReasonName,
  StreamErrorStep,
  TextBlock,
  ThinkingBlock,
  ToolCallBlock,
  UsageSpec,
  WireProvider,
} from "./types.ts";
