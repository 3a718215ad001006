// The HTTP error answers the fake server can give, with the status codes and body wordings real providers
// send (OpenAI `{error:{message,type,code}}`, Anthropic `{type:"error",error:{type,message}}`). Owns the texts;
// it does not decide when a fault is served (server.ts) nor how clients classify them.
import type { FaultName, OverflowVariant, WireProvider } from "./types.ts";

interface FaultText {
  status: number;
  /** OpenAI-style `error` object. */
  openai: { message: string; type: string; code: string | null; param?: string };
  /** Anthropic-style `error` object. */
  anthropic: { type: string; message: string };
}

const FAULTS: Record<Exclude<FaultName, "context_overflow">, FaultText> = {
  rate_limit: {
    status: 429,
    openai: {
      message:
        "Rate limit reached for gpt-4o in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.",
      type: "requests",
      code: "rate_limit_exceeded",
    },
    anthropic: {
      type: "rate_limit_error",
      message:
        "Number of request tokens has exceeded your per-minute rate limit (https://docs.anthropic.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
    },
  },
  auth: {
    status: 401,
    openai: {
      message:
        "Incorrect API key provided: sk-…fake. You can find your API key at https://platform.openai.com/account/api-keys.",
      type: "invalid_request_error",
      code: "invalid_api_key",
    },
    anthropic: { type: "authentication_error", message: "invalid x-api-key" },
  },
  billing: {
    status: 402,
    openai: {
      message:
        "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
      type: "insufficient_quota",
      code: "insufficient_quota",
    },
    anthropic: {
      type: "invalid_request_error",
      message:
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
    },
  },
  server_error: {
    status: 500,
    openai: {
      message: "The server had an error while processing your request. Sorry about that!",
      type: "server_error",
      code: null,
    },
    anthropic: { type: "api_error", message: "Internal server error" },
  },
  overloaded: {
    status: 529,
    openai: {
      message: "The engine is currently overloaded, please try again later.",
      type: "server_error",
      code: null,
    },
    anthropic: { type: "overloaded_error", message: "Overloaded" },
  },
  unavailable: {
    status: 503,
    openai: { message: "Service Unavailable", type: "server_error", code: null },
    anthropic: { type: "api_error", message: "Service Unavailable" },
  },
};

/** Each provider's context-overflow wording; every one matches pi-ai's `isContextOverflow` patterns. */
export const OVERFLOW_TEXTS: Record<
  OverflowVariant,
  { status: number; message: string; type: string; code: string | null }
> = {
  openai: {
    status: 400,
    type: "invalid_request_error",
    code: "context_length_exceeded",
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
  },
  anthropic: {
    status: 400,
    type: "invalid_request_error",
    code: null,
    message: "prompt is too long: 210000 tokens > 200000 maximum",
  },
  "anthropic-413": {
    status: 413,
    type: "request_too_large",
    code: null,
    message: "Request exceeds the maximum allowed number of bytes.",
  },
  gemini: {
    status: 400,
    type: "INVALID_ARGUMENT",
    code: null,
    message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
  },
  openrouter: {
    status: 400,
    type: "invalid_request_error",
    code: null,
    message:
      "This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens (139000 of text input, 1000 in the output). Please reduce the length of either one.",
  },
  groq: {
    status: 400,
    type: "invalid_request_error",
    code: null,
    message: "Please reduce the length of the messages or completion.",
  },
  mistral: {
    status: 400,
    type: "invalid_request_error",
    code: null,
    message:
      "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
  },
  "llama-cpp": {
    status: 400,
    type: "exceed_context_size_error",
    code: null,
    message: "the request exceeds the available context size, try increasing it",
  },
};

export interface FaultOverrides {
  status?: number;
  message?: string;
  variant?: OverflowVariant;
}

/** The status and JSON body of a fault, in the envelope of the given wire format. */
export function faultResponse(
  fault: FaultName,
  provider: WireProvider,
  overrides: FaultOverrides = {},
): { status: number; body: Record<string, unknown> } {
  if (fault === "context_overflow") {
    const text = OVERFLOW_TEXTS[overrides.variant ?? provider];
    const message = overrides.message ?? text.message;
    const status = overrides.status ?? text.status;
    if (provider === "anthropic") {
      return { status, body: { type: "error", error: { type: text.type, message } } };
    }
    return {
      status,
      body: { error: { message, type: text.type, param: "messages", code: text.code } },
    };
  }
  const text = FAULTS[fault];
  const status = overrides.status ?? text.status;
  if (provider === "anthropic") {
    return {
      status,
      body: {
        type: "error",
        error: { type: text.anthropic.type, message: overrides.message ?? text.anthropic.message },
      },
    };
  }
  return { status, body: { error: { ...text.openai, message: overrides.message ?? text.openai.message } } };
}

export const FAULT_NAMES: readonly FaultName[] = [
  "rate_limit",
  "auth",
  "billing",
  "context_overflow",
  "server_error",
  "overloaded",
  "unavailable",
];

export const OVERFLOW_VARIANTS = Object.keys(OVERFLOW_TEXTS) as OverflowVariant[];
