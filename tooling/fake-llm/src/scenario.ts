// Scenario validation: turns untrusted input (a parsed JSON file or a test's object) into a `Scenario`,
// collecting every problem with its path (`steps[2].fault: …`) into one ScenarioError. Owns the rules of the
// schema documented in README.md; it does not serve anything.
import { readFile } from "node:fs/promises";
import { FAULT_NAMES, OVERFLOW_VARIANTS } from "./faults.ts";
import type { RouteRule, Scenario, Step } from "./types.ts";

export class ScenarioError extends Error {
  readonly issues: readonly string[];
  constructor(source: string, issues: readonly string[]) {
    super(`invalid fake-llm scenario${source ? ` (${source})` : ""}:\n  ${issues.join("\n  ")}`);
    this.name = "ScenarioError";
    this.issues = issues;
  }
}

const STEP_TYPES = ["response", "error", "reset", "stall", "malformed", "stream_error"] as const;
const RESPONSE_KEYS = [
  "content",
  "text",
  "thinking",
  "toolCalls",
  "stopReason",
  "usage",
  "chunkSize",
  "repeat",
  "delayMs",
  "latencyMs",
  "reasoningField",
];
const ALLOWED_KEYS: Record<(typeof STEP_TYPES)[number], readonly string[]> = {
  response: ["type", "times", ...RESPONSE_KEYS],
  error: [
    "type",
    "times",
    "fault",
    "status",
    "message",
    "body",
    "retryAfterSeconds",
    "retryAfterMs",
    "variant",
    "headers",
    "latencyMs",
  ],
  reset: ["type", "times", "afterDeltas", ...RESPONSE_KEYS],
  stall: ["type", "times", "afterDeltas", ...RESPONSE_KEYS],
  malformed: ["type", "times", "afterDeltas", "raw", ...RESPONSE_KEYS],
  stream_error: ["type", "times", "afterDeltas", "fault", "message", ...RESPONSE_KEYS],
};

type Issues = string[];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function checkNonNegative(value: unknown, path: string, issues: Issues, integer = true): void {
  if (value === undefined) return;
  if (
    typeof value !== "number" ||
    !Number.isFinite(value) ||
    value < 0 ||
    (integer && !Number.isInteger(value))
  ) {
    issues.push(`${path}: expected a non-negative ${integer ? "integer" : "number"} (got ${show(value)})`);
  }
}

function checkString(value: unknown, path: string, issues: Issues, required = false): void {
  if (value === undefined && !required) return;
  if (typeof value !== "string") issues.push(`${path}: expected a string (got ${show(value)})`);
}

function checkOneOf(value: unknown, allowed: readonly string[], path: string, issues: Issues): void {
  if (value === undefined) return;
  if (typeof value !== "string" || !allowed.includes(value)) {
    issues.push(`${path}: expected one of ${allowed.join(", ")} (got ${show(value)})`);
  }
}

function checkToolCall(call: unknown, path: string, issues: Issues): void {
  if (!isObject(call)) {
    issues.push(`${path}: expected an object (got ${show(call)})`);
    return;
  }
  checkString(call.id, `${path}.id`, issues);
  checkString(call.name, `${path}.name`, issues, true);
  if (!isObject(call.arguments) && typeof call.arguments !== "string") {
    issues.push(`${path}.arguments: expected an object or a string (got ${show(call.arguments)})`);
  }
}

function checkResponseFields(step: Record<string, unknown>, path: string, issues: Issues): void {
  if (step.content !== undefined) {
    for (const key of ["text", "thinking", "toolCalls"]) {
      if (step[key] !== undefined) issues.push(`${path}.${key}: not allowed together with content`);
    }
    if (!Array.isArray(step.content)) {
      issues.push(`${path}.content: expected an array of blocks (got ${show(step.content)})`);
    } else {
      for (const [index, block] of (step.content as unknown[]).entries()) {
        const blockPath = `${path}.content[${index}]`;
        if (!isObject(block)) {
          issues.push(`${blockPath}: expected an object (got ${show(block)})`);
          continue;
        }
        if (block.type === "text") checkString(block.text, `${blockPath}.text`, issues, true);
        else if (block.type === "thinking") {
          checkString(block.thinking, `${blockPath}.thinking`, issues, true);
          checkString(block.signature, `${blockPath}.signature`, issues);
        } else if (block.type === "toolCall") checkToolCall(block, blockPath, issues);
        else
          issues.push(
            `${blockPath}.type: expected one of text, thinking, toolCall (got ${show(block.type)})`,
          );
      }
    }
  }
  checkString(step.text, `${path}.text`, issues);
  checkString(step.thinking, `${path}.thinking`, issues);
  if (step.toolCalls !== undefined) {
    if (!Array.isArray(step.toolCalls))
      issues.push(`${path}.toolCalls: expected an array (got ${show(step.toolCalls)})`);
    else {
      for (const [index, call] of (step.toolCalls as unknown[]).entries()) {
        checkToolCall(call, `${path}.toolCalls[${index}]`, issues);
      }
    }
  }
  checkString(step.stopReason, `${path}.stopReason`, issues);
  if (step.usage !== undefined) {
    if (!isObject(step.usage)) issues.push(`${path}.usage: expected an object (got ${show(step.usage)})`);
    else {
      for (const key of ["input", "output"]) {
        if (step.usage[key] === undefined) issues.push(`${path}.usage.${key}: required`);
      }
      for (const key of ["input", "output", "cacheRead", "cacheWrite", "reasoning"]) {
        checkNonNegative(step.usage[key], `${path}.usage.${key}`, issues);
      }
    }
  }
  if (
    step.chunkSize !== undefined &&
    (typeof step.chunkSize !== "number" || !Number.isInteger(step.chunkSize) || step.chunkSize < 1)
  ) {
    issues.push(`${path}.chunkSize: expected an integer ≥ 1 (got ${show(step.chunkSize)})`);
  }
  if (
    step.repeat !== undefined &&
    (typeof step.repeat !== "number" || !Number.isSafeInteger(step.repeat) || step.repeat < 1)
  ) {
    issues.push(`${path}.repeat: expected an integer ≥ 1 (got ${show(step.repeat)})`);
  }
  checkNonNegative(step.delayMs, `${path}.delayMs`, issues, false);
  checkOneOf(
    step.reasoningField,
    ["reasoning_content", "reasoning", "reasoning_text"],
    `${path}.reasoningField`,
    issues,
  );
}

function checkStep(step: unknown, path: string, issues: Issues): void {
  if (typeof step === "function") return;
  if (!isObject(step)) {
    issues.push(`${path}: expected a step object (got ${show(step)})`);
    return;
  }
  const type = step.type;
  if (typeof type !== "string" || !(STEP_TYPES as readonly string[]).includes(type)) {
    issues.push(`${path}.type: expected one of ${STEP_TYPES.join(", ")} (got ${show(type)})`);
    return;
  }
  const allowed = ALLOWED_KEYS[type as (typeof STEP_TYPES)[number]];
  for (const key of Object.keys(step)) {
    if (!allowed.includes(key)) issues.push(`${path}.${key}: unknown field for a "${type}" step`);
  }
  if (step.times !== undefined && step.times !== "always") {
    if (typeof step.times !== "number" || !Number.isInteger(step.times) || step.times < 1) {
      issues.push(`${path}.times: expected an integer ≥ 1 or "always" (got ${show(step.times)})`);
    }
  }
  checkNonNegative(step.latencyMs, `${path}.latencyMs`, issues, false);
  if (type === "error") {
    if (step.fault === undefined) issues.push(`${path}.fault: required (one of ${FAULT_NAMES.join(", ")})`);
    checkOneOf(step.fault, FAULT_NAMES, `${path}.fault`, issues);
    if (
      step.status !== undefined &&
      (typeof step.status !== "number" ||
        !Number.isInteger(step.status) ||
        step.status < 400 ||
        step.status > 599)
    ) {
      issues.push(`${path}.status: expected an HTTP error status 400–599 (got ${show(step.status)})`);
    }
    checkString(step.message, `${path}.message`, issues);
    if (step.body !== undefined && typeof step.body !== "string" && !isObject(step.body)) {
      issues.push(`${path}.body: expected an object or a string (got ${show(step.body)})`);
    }
    checkNonNegative(step.retryAfterSeconds, `${path}.retryAfterSeconds`, issues, false);
    checkNonNegative(step.retryAfterMs, `${path}.retryAfterMs`, issues, false);
    checkOneOf(step.variant, OVERFLOW_VARIANTS, `${path}.variant`, issues);
    if (step.variant !== undefined && step.fault !== "context_overflow") {
      issues.push(`${path}.variant: only applies to fault "context_overflow"`);
    }
    if (step.headers !== undefined) {
      if (!isObject(step.headers) || Object.values(step.headers).some((value) => typeof value !== "string")) {
        issues.push(`${path}.headers: expected an object of string values (got ${show(step.headers)})`);
      }
    }
    return;
  }
  checkResponseFields(step, path, issues);
  checkNonNegative(step.afterDeltas, `${path}.afterDeltas`, issues);
  if (type === "malformed") checkString(step.raw, `${path}.raw`, issues);
  if (type === "stream_error") {
    checkOneOf(step.fault, FAULT_NAMES, `${path}.fault`, issues);
    checkString(step.message, `${path}.message`, issues);
  }
}

function checkSteps(steps: unknown, path: string, issues: Issues): void {
  if (!Array.isArray(steps)) {
    issues.push(`${path}: expected an array of steps (got ${show(steps)})`);
    return;
  }
  for (const [index, step] of (steps as unknown[]).entries()) checkStep(step, `${path}[${index}]`, issues);
}

function checkRule(rule: unknown, path: string, issues: Issues): void {
  if (!isObject(rule)) {
    issues.push(`${path}: expected a rule object (got ${show(rule)})`);
    return;
  }
  for (const key of Object.keys(rule)) {
    if (!["name", "when", "steps"].includes(key)) issues.push(`${path}.${key}: unknown field for a rule`);
  }
  checkString(rule.name, `${path}.name`, issues);
  if (!isObject(rule.when)) issues.push(`${path}.when: expected an object (got ${show(rule.when)})`);
  else {
    for (const key of Object.keys(rule.when)) {
      if (!["provider", "model", "apiKeySuffix"].includes(key)) {
        issues.push(`${path}.when.${key}: unknown field (expected provider, model, apiKeySuffix)`);
      }
    }
    checkOneOf(rule.when.provider, ["openai", "anthropic"], `${path}.when.provider`, issues);
    checkString(rule.when.model, `${path}.when.model`, issues);
    checkString(rule.when.apiKeySuffix, `${path}.when.apiKeySuffix`, issues);
  }
  checkSteps(rule.steps, `${path}.steps`, issues);
}

/** Checks a scenario and returns it typed; throws one ScenarioError listing every problem. */
export function validateScenario(input: unknown, source = ""): Scenario {
  const issues: Issues = [];
  if (!isObject(input)) throw new ScenarioError(source, [`(root): expected an object (got ${show(input)})`]);
  for (const key of Object.keys(input)) {
    if (!["rules", "steps", "fallback", "$schema", "description"].includes(key)) {
      issues.push(`${key}: unknown field (expected rules, steps, fallback)`);
    }
  }
  if (input.rules !== undefined) {
    if (!Array.isArray(input.rules)) issues.push(`rules: expected an array (got ${show(input.rules)})`);
    else
      for (const [index, rule] of (input.rules as unknown[]).entries())
        checkRule(rule, `rules[${index}]`, issues);
  }
  if (input.steps !== undefined) checkSteps(input.steps, "steps", issues);
  if (input.fallback !== undefined) checkStep(input.fallback, "fallback", issues);
  if (issues.length > 0) throw new ScenarioError(source, issues);
  const scenario: Scenario = {};
  if (input.rules !== undefined) scenario.rules = input.rules as RouteRule[];
  if (input.steps !== undefined) scenario.steps = input.steps as Step[];
  if (input.fallback !== undefined) scenario.fallback = input.fallback as Step;
  return scenario;
}

/** Reads and validates a JSON scenario file. */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  const text = await readFile(path, "utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ScenarioError(path, [
      `not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
  return validateScenario(parsed, path);
}
