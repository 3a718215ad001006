// The scenario vocabulary of the fake LLM server: steps (responses and faults), routing rules and the
// record of a received request. Owns only shapes; validation lives in scenario.ts, wire rendering in
// openai-wire.ts / anthropic-wire.ts, serving in server.ts.

/** The wire format a request arrived in: OpenAI chat completions or Anthropic Messages. */
export type WireProvider = "openai" | "anthropic";

/** pi-ai's stop reasons, mapped to each wire's own finish/stop reason; any other string is sent verbatim. */
export type StopReasonName = "stop" | "toolUse" | "length";

export interface TextBlock {
  type: "text";
  text: string;
}

export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  /** Anthropic only: sent as a `signature_delta`; default "sig-fake". OpenAI wire ignores it. */
  signature?: string;
}

export interface ToolCallBlock {
  type: "toolCall";
  /** Default: `call_<n>` (OpenAI) / `toolu_<n>` (Anthropic), n counting per response. */
  id?: string;
  name: string;
  /** A JSON object (serialised for the wire) or a raw string sent as-is (to test broken arguments). */
  arguments: Record<string, unknown> | string;
}

export type ContentBlock = TextBlock | ThinkingBlock | ToolCallBlock;

/** Token counts as pi-ai reports them back (`usage.input` excludes cache reads and writes). */
export interface UsageSpec {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** OpenAI wire only: `completion_tokens_details.reasoning_tokens`. */
  reasoning?: number;
}

/** What an assistant message contains and how it is streamed. */
export interface ResponseFields {
  /** Ordered content; when given, the `text` / `thinking` / `toolCalls` shorthands are not allowed. */
  content?: ContentBlock[];
  /** Shorthand: thinking first, then text, then tool calls. */
  text?: string;
  thinking?: string;
  toolCalls?: Omit<ToolCallBlock, "type">[];
  /** Default: "toolUse" when the message has tool calls, else "stop". */
  stopReason?: StopReasonName | (string & {});
  /** Default: input 10, output = a rough count of what was streamed. */
  usage?: UsageSpec;
  /** Characters per text/thinking/argument delta; default: text split at word starts, arguments in 3 parts. */
  chunkSize?: number;
  /**
   * Streams the text (every text block) this many times over, generated while it is sent: the server never
   * holds more than one repetition, so a 50 MB reply is `reply("x".repeat(65_536), { repeat: 800 })` and an
   * endless one a huge count with `delayMs`. Default 1. Streams only (a JSON body repeats the text in full).
   */
  repeat?: number;
  /** Pause between SSE frames (ms). Default 0. */
  delayMs?: number;
  /** Pause before the response headers are sent (ms). Default 0. */
  latencyMs?: number;
  /** OpenAI wire: the delta field that carries thinking (`reasoning_content` default, `reasoning`, `reasoning_text`). */
  reasoningField?: "reasoning_content" | "reasoning" | "reasoning_text";
}

/** A normal, complete answer (SSE when the request asked for a stream, JSON otherwise). */
export interface ResponseStep extends ResponseFields {
  type: "response";
  /** Consume this step this many times (default 1), or serve it to every request ("always"). */
  times?: number | "always";
}

/** The named HTTP faults, with each provider's real error body (see faults.ts). */
export type FaultName =
  | "rate_limit"
  | "auth"
  | "billing"
  | "context_overflow"
  | "server_error"
  | "overloaded"
  | "unavailable";

/** Provider wordings for a context-overflow 400 (all recognised by pi-ai's `isContextOverflow`). */
export type OverflowVariant =
  | "openai"
  | "anthropic"
  | "anthropic-413"
  | "gemini"
  | "openrouter"
  | "groq"
  | "mistral"
  | "llama-cpp";

/** An HTTP error answer (no stream). */
export interface ErrorStep {
  type: "error";
  fault: FaultName;
  /** Override the fault's status code (e.g. 429 for OpenAI's insufficient_quota billing error). */
  status?: number;
  /** Override the error message inside the provider's error envelope. */
  message?: string;
  /** Replace the whole body (object → JSON, string → sent verbatim). */
  body?: Record<string, unknown> | string;
  /** Sends `retry-after: <seconds>`. */
  retryAfterSeconds?: number;
  /** Sends `retry-after-ms: <ms>` (honoured before retry-after by the OpenAI/Anthropic SDK policy). */
  retryAfterMs?: number;
  /** For `context_overflow`: whose wording to send; default: the request's wire provider. */
  variant?: OverflowVariant;
  headers?: Record<string, string>;
  latencyMs?: number;
  times?: number | "always";
}

/** Streams part of a response, then destroys the socket (the client sees a connection reset). */
export interface ResetStep extends ResponseFields {
  type: "reset";
  /** Content deltas (text, thinking, tool-argument) sent before the cut. Default 1. */
  afterDeltas?: number;
  times?: number | "always";
}

/** Streams part of a response, then sends nothing until the client aborts or the server closes. */
export interface StallStep extends ResponseFields {
  type: "stall";
  afterDeltas?: number;
  times?: number | "always";
}

/** Streams part of a response, then a frame that is not valid SSE JSON, then ends the response. */
export interface MalformedStep extends ResponseFields {
  type: "malformed";
  afterDeltas?: number;
  /** The bad `data:` payload. Default `{"choices": [ {"delta": <<not json>>`. */
  raw?: string;
  times?: number | "always";
}

/**
 * Streams part of a response, then an in-stream error (Anthropic `event: error`, OpenAI `data: {"error":…}`),
 * as providers do when they overload mid-answer.
 */
export interface StreamErrorStep extends ResponseFields {
  type: "stream_error";
  afterDeltas?: number;
  /** Default "overloaded". */
  fault?: FaultName;
  message?: string;
  times?: number | "always";
}

/** A step as a scenario file can express it. */
export type DataStep = ResponseStep | ErrorStep | ResetStep | StallStep | MalformedStep | StreamErrorStep;

/** A step computed from the request (tests that echo what they were sent). Not expressible in JSON. */
export type StepFunction = (request: RecordedRequest) => DataStep | Promise<DataStep>;

export type Step = DataStep | StepFunction;

/** Which requests a rule answers; every given field must match. */
export interface RouteMatch {
  provider?: WireProvider;
  model?: string;
  /** The API key ends with this string (a full key matches too). */
  apiKeySuffix?: string;
}

export interface RouteRule {
  /** Shown in the request record (`rule`) and in errors. Default `rules[<index>]`. */
  name?: string;
  when: RouteMatch;
  steps: Step[];
}

export interface Scenario {
  /** Tried in order; the first matching rule that still has a step answers. */
  rules?: RouteRule[];
  /** Answers every request no rule took, in order. */
  steps?: Step[];
  /**
   * Answers every request once rules and steps are used up (its `times` is ignored). Without it such a request
   * gets a 400 `fake_llm_unscripted` error naming the request, which pi-ai reports as a non-retryable error.
   */
  fallback?: Step;
}

/** One received request, as tests assert on it. */
export interface RecordedRequest {
  /** 0-based arrival order. */
  index: number;
  provider: WireProvider | "unknown";
  method: string;
  /** Path with query, e.g. `/v1/messages?beta=true`. */
  path: string;
  /** Lower-cased header names; `authorization` / `x-api-key` values reduced to `…<last 4>`. */
  headers: Record<string, string>;
  /** The last 4 characters of the API key (Bearer token or x-api-key), or null when none was sent. */
  apiKeySuffix: string | null;
  /** `body.model` when present. */
  model: string | null;
  stream: boolean;
  /** The parsed JSON body (null when empty or not JSON; see `rawBody`). */
  body: unknown;
  rawBody: string;
  /** The rule that answered (its name), or null for the global queue / no step. */
  rule: string | null;
  /** The step type served (`response`, `error:rate_limit`, `reset`, …), or null when nothing was scripted. */
  served: string | null;
  receivedAt: number;
}
