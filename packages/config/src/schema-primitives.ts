// Small reusable schema pieces: identifiers, model refs, levels, durations.
// Owns: what a valid value looks like and the "expected ..." phrase a user
// reads when it is not. Does not own: normalising refs (runtime-resolver).
import { z } from "zod";
import { AGENT_ID_PATTERN, THINKING_LEVELS } from "./schema-constants.ts";

export { AGENT_ID_PATTERN, THINKING_LEVELS };

export const agentId = z
  .string()
  .regex(AGENT_ID_PATTERN, {
    error: 'expected an agent id (1-64 letters, digits, "_" or "-", starting with a letter or digit)',
  })
  .transform((id) => id.toLowerCase());

export const nonEmptyString = z.string().trim().min(1, { error: "expected a non-empty string" });

/** A `provider/model` ref or an alias; aliases resolve later, so only the shape is checked here. */
export const modelRef = z
  .string()
  .trim()
  .min(1, { error: 'expected a model ref like "anthropic/claude-sonnet-4-5" or an alias' })
  .regex(/^[^\s/][^\s]*$/, { error: 'expected a model ref like "anthropic/claude-sonnet-4-5" or an alias' })
  .describe('A model ref "provider/model" (optionally "@profile"), or an alias from a models map.');

/** `model` is a ref or `{primary, fallbacks}`; normalised to the object form. An explicit `fallbacks: []` means none. */
export const modelSelection = z
  .union(
    [
      modelRef,
      z.strictObject({
        primary: modelRef,
        fallbacks: z
          .array(modelRef)
          .optional()
          .describe("Tried in order after the primary fails; [] = none."),
      }),
    ],
    { error: "expected a model ref string or { primary, fallbacks }" },
  )
  .transform((value): { primary: string; fallbacks?: string[] | undefined } =>
    typeof value === "string" ? { primary: value } : value,
  );

export const modelsMap = z
  .record(
    modelRef,
    z.strictObject({
      alias: nonEmptyString.optional().describe("A short name usable wherever a model ref is."),
      params: z.record(z.string(), z.unknown()).optional().describe("Provider parameters for this model."),
    }),
  )
  .describe('Models by "provider/model": alias and params. Also the allowlist when non-empty.');

export const thinkingLevel = z.enum(THINKING_LEVELS);
export const verboseLevel = z.enum(["off", "on", "full"]);
export const reasoningLevel = z.enum(["off", "on", "stream"]);
export const elevatedLevel = z.enum(["off", "on", "ask", "full"]);
export const onOff = z.enum(["on", "off"]);

export const nonNegativeInt = z.number().int().min(0);
export const positiveInt = z.number().int().min(1);

/** Allow/deny lists hold tool names, `group:*` names or `*` globs. */
export const toolPatternList = z.array(nonEmptyString);

/** Channel ids, DM peers and group ids may be numbers in the file (Telegram); they are kept as strings. */
export const peerId = z
  .union([z.string().trim().min(1), z.number().int()], {
    error: "expected a sender or chat id (string or integer)",
  })
  .transform((value) => String(value));
