// Validation of what entry points hand the kernel: `SessionKernelInput` and `TurnInput` as zod schemas, and
// `KernelInputError`, whose message lists every problem as `path: expected ..., found ...` in the config
// package's style (its `issuesFromZod`, `knownKeysOf` and `formatPath`). Owns: the shapes' rules (types, ranges, unknown
// keys). Does not own: whether an agent, model or thinking level exists (runtime-resolver says so with its
// own errors) or the config's validity (config).
import {
  describeFound,
  formatPath,
  issuesFromZod,
  type KernelConfig,
  knownKeysOf,
  QUEUE_MODES,
} from "@agent-kernel/config";
import { z } from "zod";
import type { SessionKernelInput, TurnInput } from "./types.ts";

/** One problem of an input: where, and what was expected and found. */
export interface KernelInputIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** An input the kernel cannot run; `message` says everything that is wrong, one line per problem. */
export class KernelInputError extends Error {
  override readonly name = "KernelInputError";
  readonly issues: readonly KernelInputIssue[];

  constructor(what: string, issues: readonly KernelInputIssue[]) {
    const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
    super(
      [
        `Invalid ${what} (${count}):`,
        ...issues.map((issue) => `  - ${formatPath(issue.path)}: ${issue.message}`),
      ].join("\n"),
    );
    this.issues = issues;
  }
}

const nonEmpty = z.string().trim().min(1, "expected a non-empty string");
const optionalText = nonEmpty.optional();

const messageContextSchema = z.strictObject({
  channel: optionalText,
  accountId: optionalText,
  chatType: z.enum(["direct", "group", "channel"]).optional(),
  senderId: optionalText,
  senderIsOwner: z.boolean().optional(),
  groupId: optionalText,
  threadId: optionalText,
  to: optionalText,
  currentMessageId: optionalText,
});

const runOptionsSchema = z.strictObject({
  entryPoint: optionalText,
  model: optionalText,
  thinking: optionalText,
  thinkingStrict: z.boolean().optional(),
  timeoutSeconds: z.number().int("expected a whole number of seconds").min(0).optional(),
  queueMode: z.enum(QUEUE_MODES).optional(),
  forceNewSession: z.boolean().optional(),
  sandboxRequired: z.boolean().optional(),
  cronPayload: z.strictObject({ primary: nonEmpty, fallbacks: z.array(nonEmpty).optional() }).optional(),
  promptMode: z.enum(["full", "minimal"]).optional(),
  enforceFinalTag: z.boolean().optional(),
  useSessionContextTokens: z.boolean().optional(),
});

/**
 * The schema of a session input's `config`: a parsed `KernelConfig`, checked only for its outline (the config
 * package validates the rest). An interface, so the published .d.ts names it instead of inlining the whole
 * config type (a thousand lines that did not compile in a strict consumer).
 */
export interface KernelConfigSchema extends z.ZodCustom<KernelConfig, KernelConfig> {}

const configSchema: KernelConfigSchema = z.custom<KernelConfig>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    typeof (value as { agents?: unknown }).agents === "object" &&
    typeof (value as { session?: unknown }).session === "object",
  {
    error: (issue) =>
      `expected a parsed KernelConfig (from loadConfig or parseConfig), found ${describeFound(issue.input, [])}`,
  },
);

export const sessionKernelInputSchema = z.strictObject({
  agentId: optionalText,
  sessionKey: optionalText,
  sessionId: optionalText,
  workspaceDir: optionalText,
  agentDir: optionalText,
  config: configSchema.optional(),
  messageContext: messageContextSchema.optional(),
  runOptions: runOptionsSchema.optional(),
});

/** The image types a turn may carry: the ones every vision provider pi speaks to takes inline. */
export const TURN_IMAGE_MIME_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
/** The largest image a turn may carry, decoded: OpenClaw's image cap (media-core `MAX_IMAGE_BYTES`, 6 MiB). */
export const TURN_IMAGE_MAX_BYTES = 6 * 1024 * 1024;
/** The most images one turn may carry (ours: OpenClaw caps bytes per image, not the count). */
export const TURN_IMAGE_MAX_COUNT = 10;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decoded size of standard base64 text (already checked to be base64). */
function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return (data.length / 4) * 3 - padding;
}

const mebibytes = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

const imageSchema = z.strictObject({
  type: z.literal("image"),
  data: z.string().superRefine((data, context) => {
    const problem =
      data === ""
        ? "expected the image's bytes as base64, found an empty string"
        : data.length % 4 !== 0 || !BASE64.test(data)
          ? `expected the image's bytes as standard base64 (A-Z a-z 0-9 + /, '=' padding, no "data:" prefix), found ${data.length} characters that are not`
          : base64Bytes(data) > TURN_IMAGE_MAX_BYTES
            ? `expected an image of at most ${mebibytes(TURN_IMAGE_MAX_BYTES)}, found ${mebibytes(base64Bytes(data))}`
            : undefined;
    if (problem !== undefined) context.addIssue({ code: "custom", message: problem, input: data.length });
  }),
  mimeType: z.string().superRefine((type, context) => {
    if ((TURN_IMAGE_MIME_TYPES as readonly string[]).includes(type)) return;
    context.addIssue({
      code: "custom",
      message: `expected one of ${TURN_IMAGE_MIME_TYPES.map((known) => `"${known}"`).join(", ")}, found ${JSON.stringify(type.slice(0, 80))}`,
      input: type,
    });
  }),
});

const fn = (what: string) =>
  z.custom<never>((value) => typeof value === "function", `expected ${what} (a function)`);

const callbacksSchema = z.strictObject({
  onAgentEvent: fn("onAgentEvent").optional(),
  onPartialReply: fn("onPartialReply").optional(),
  onBlockReply: fn("onBlockReply").optional(),
  onReasoningStream: fn("onReasoningStream").optional(),
  onToolResult: fn("onToolResult").optional(),
});

export const turnInputSchema = z
  .strictObject({
    prompt: z.string(),
    images: z
      .array(imageSchema)
      .max(TURN_IMAGE_MAX_COUNT, `expected at most ${TURN_IMAGE_MAX_COUNT} images in one turn`)
      .optional(),
    extraSystemPrompt: z.string().optional(),
    ownerNumbers: z.array(nonEmpty).optional(),
    timeoutMs: z.number().int("expected a whole number of milliseconds").min(0).optional(),
    runId: z
      .string()
      .regex(/^[\w.:-]{1,128}$/, "expected 1-128 letters, digits, '_', '-', '.' or ':'")
      .optional(),
    signal: z
      .custom<AbortSignal>((value) => value instanceof AbortSignal, "expected an AbortSignal")
      .optional(),
    callbacks: callbacksSchema.optional(),
    delivery: z
      .custom<never>((value) => typeof value === "object" && value !== null, "expected a DeliverySink object")
      .optional(),
    parentRunId: z.string().min(1).optional(),
  })
  .superRefine((turn, context) => {
    if (turn.prompt.trim() === "" && (turn.images?.length ?? 0) === 0) {
      context.addIssue({
        code: "custom",
        path: ["prompt"],
        message: "expected a non-empty prompt (or at least one image)",
        input: turn.prompt,
      });
    }
  });

function toIssues(schema: z.ZodType, issues: readonly z.core.$ZodIssue[]): KernelInputIssue[] {
  return issuesFromZod(issues, knownKeysOf(schema)).map(({ path, message }) => ({ path, message }));
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw new KernelInputError(what, toIssues(schema, parsed.error.issues));
}

/** The input as given (unknown keys and wrong types rejected), or a `KernelInputError`. */
export function validateSessionInput(input: unknown): SessionKernelInput {
  return parseWith(sessionKernelInputSchema, input, "session input") as SessionKernelInput;
}

export function validateTurnInput(input: unknown): TurnInput {
  // Functions and signals pass through as they are (zod would copy the object, not them).
  const parsed = parseWith(turnInputSchema, input, "turn input");
  return parsed as unknown as TurnInput;
}
