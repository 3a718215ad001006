// Loading scenario files (`tooling/parity/scenarios/*.json`): each one is checked field by field, and the
// scripted model's steps with fake-llm's own validator, so a typo names the file and the field instead of
// failing a cell in a confusing way. Owns the scenario file format (types.ts `ParityScenario`).
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { ScenarioError, validateScenario } from "@agent-kernel/fake-llm";
import type { ParityScenario, ScenarioInbound, ScenarioModelRule } from "./types.ts";

export const SCENARIOS_DIR = join(import.meta.dirname, "..", "scenarios");

export class ParityScenarioError extends Error {
  override readonly name = "ParityScenarioError";
}

const FIELDS = new Set([
  "description",
  "covers",
  "config",
  "profiles",
  "model",
  "inbound",
  "abortAfterRequests",
  "workspace",
  "needsMessageTool",
  "expectStatuses",
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Checks one parsed scenario; every problem is reported at once, with its path. */
export function parseScenario(name: string, raw: unknown): ParityScenario {
  const issues: string[] = [];
  if (!isObject(raw)) throw new ParityScenarioError(`scenario ${name}: expected a JSON object`);
  for (const key of Object.keys(raw)) if (!FIELDS.has(key)) issues.push(`${key}: unknown field`);
  if (typeof raw.description !== "string" || raw.description.trim() === "")
    issues.push("description: required text");
  const covers = raw.covers;
  if (!Array.isArray(covers) || covers.length === 0 || !covers.every((c) => typeof c === "string"))
    issues.push("covers: expected a non-empty list of strings");
  if (raw.config !== undefined && !isObject(raw.config)) issues.push("config: expected an object");
  const profiles = raw.profiles;
  if (
    profiles !== undefined &&
    (!Array.isArray(profiles) || !profiles.every((p) => typeof p === "string" && /^[a-z0-9]+$/.test(p)))
  )
    issues.push("profiles: expected a list of lower-case names");
  const model = raw.model;
  if (!Array.isArray(model) || model.length === 0) issues.push("model: expected a non-empty list of rules");
  else {
    model.forEach((rule: unknown, index) => {
      if (!isObject(rule)) {
        issues.push(`model[${index}]: expected an object`);
        return;
      }
      for (const key of Object.keys(rule))
        if (!["profile", "model", "steps"].includes(key))
          issues.push(`model[${index}].${key}: unknown field`);
      if (rule.profile !== undefined && !(Array.isArray(profiles) && profiles.includes(rule.profile)))
        issues.push(`model[${index}].profile: "${String(rule.profile)}" is not one of profiles`);
      if (Array.isArray(profiles) && profiles.length > 0 && rule.profile === undefined)
        issues.push(`model[${index}].profile: required when the scenario has profiles`);
      try {
        validateScenario({ steps: rule.steps });
      } catch (error) {
        if (!(error instanceof ScenarioError)) throw error;
        for (const issue of error.issues) issues.push(`model[${index}].${issue}`);
      }
    });
  }
  const inbound = raw.inbound;
  if (!Array.isArray(inbound) || inbound.length === 0) issues.push("inbound: expected a non-empty list");
  else
    inbound.forEach((message: unknown, index) => {
      if (!isObject(message) || typeof message.text !== "string" || message.text.trim() === "")
        issues.push(`inbound[${index}].text: required text`);
      else if (index === 0 && message.concurrentWithPrevious === true)
        issues.push("inbound[0].concurrentWithPrevious: the first message has no previous one");
    });
  if (
    raw.abortAfterRequests !== undefined &&
    !(Number.isInteger(raw.abortAfterRequests) && Number(raw.abortAfterRequests) >= 1)
  )
    issues.push("abortAfterRequests: expected an integer ≥ 1");
  const statuses = raw.expectStatuses;
  const known = ["succeeded", "failed", "aborted", "timed_out"];
  if (!Array.isArray(statuses) || !statuses.every((s) => typeof s === "string" && known.includes(s)))
    issues.push(`expectStatuses: expected a list of ${known.join(", ")}`);
  if (
    raw.workspace !== undefined &&
    (!isObject(raw.workspace) || !Object.values(raw.workspace).every((v) => typeof v === "string"))
  )
    issues.push("workspace: expected { path: text }");
  if (issues.length > 0)
    throw new ParityScenarioError(`invalid parity scenario ${name}:\n  ${issues.join("\n  ")}`);
  return {
    name,
    description: String(raw.description),
    covers: covers as string[],
    ...(raw.config === undefined ? {} : { config: raw.config as Record<string, unknown> }),
    ...(profiles === undefined ? {} : { profiles: profiles as string[] }),
    model: model as ScenarioModelRule[],
    inbound: inbound as ScenarioInbound[],
    ...(raw.abortAfterRequests === undefined ? {} : { abortAfterRequests: Number(raw.abortAfterRequests) }),
    ...(raw.workspace === undefined ? {} : { workspace: raw.workspace as Record<string, string> }),
    ...(raw.needsMessageTool === true ? { needsMessageTool: true } : {}),
    expectStatuses: statuses as string[],
  };
}

/** Every scenario file of `dir`, in file-name order. */
export function loadScenarios(dir: string = SCENARIOS_DIR): ParityScenario[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => {
      const path = join(dir, file);
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(path, "utf8"));
      } catch (error) {
        throw new ParityScenarioError(
          `invalid parity scenario ${path}: not valid JSON (${(error as Error).message})`,
        );
      }
      return parseScenario(basename(file, ".json"), raw);
    });
}
