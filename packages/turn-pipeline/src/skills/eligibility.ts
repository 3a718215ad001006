// Whether a loaded skill is offered, with OpenClaw 2026.9.6's gates in its order: `skills.entries.<key>.enabled`
// false, a bundled skill outside `skills.allowBundled`, the manifest's `os`, then (unless `always`) its
// requirements — every `requires.env` set (in the environment, in `skills.entries.<key>.env`, or the
// `primaryEnv` with an `apiKey`), every `requires.config` path truthy (`browser.enabled` and
// `browser.evaluateEnabled` default true), every `requires.bins` on PATH, one of `requires.anyBins`.
// Owns: the decision and the reasons a skill is gated off, each naming the setting or requirement. Does not
// own: finding skills (load.ts) or how they are listed (prompt.ts, the `agent skills list` command).
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { KernelConfig } from "@agent-kernel/config";
import type { LoadedSkill } from "./load.ts";

/** A skill and whether it is offered; `reasons` says why not (empty when it is). */
export interface SkillStatus {
  readonly skill: LoadedSkill;
  readonly eligible: boolean;
  readonly reasons: readonly string[];
}

/** What the gates read besides the config: injectable so a test decides the host. */
export interface SkillHost {
  readonly platform: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly hasBinary: (name: string) => boolean;
}

/** Config paths OpenClaw treats as true when unset. */
const CONFIG_PATH_DEFAULTS: Readonly<Record<string, boolean>> = {
  "browser.enabled": true,
  "browser.evaluateEnabled": true,
};
const BLOCKED_KEYS = new Set(["__proto__", "prototype", "constructor"]);

/** This process's host: its platform, environment and PATH (binaries looked up once per name and PATH). */
export function currentSkillHost(env: NodeJS.ProcessEnv = process.env): SkillHost {
  const found = new Map<string, boolean>();
  return {
    platform: process.platform,
    env,
    hasBinary: (name) => {
      let hit = found.get(name);
      if (hit === undefined) {
        hit = binaryOnPath(name, env.PATH ?? "", process.platform === "win32" ? env.PATHEXT : undefined);
        found.set(name, hit);
      }
      return hit;
    },
  };
}

/** An executable named `name` in one of PATH's folders (with PATHEXT's extensions on Windows). */
export function binaryOnPath(name: string, path: string, pathExt?: string): boolean {
  if (name.includes("/") || name.includes("\\")) return false; // a name, never a path the skill picks
  const extensions = pathExt === undefined ? [""] : ["", ...pathExt.split(";").filter(Boolean)];
  for (const dir of path.split(delimiter).filter(Boolean)) {
    for (const extension of extensions) {
      const candidate = join(dir, name + extension);
      try {
        if (!statSync(candidate).isFile()) continue;
        accessSync(candidate, constants.X_OK);
        return true;
      } catch {
        // not here
      }
    }
  }
  return false;
}

/** The gates of every skill, in the skills' order. */
export function skillStatuses(
  skills: readonly LoadedSkill[],
  config: KernelConfig,
  host: SkillHost = currentSkillHost(),
): SkillStatus[] {
  return skills.map((skill) => {
    const reasons = gateReasons(skill, config, host);
    return { skill, eligible: reasons.length === 0, reasons };
  });
}

function gateReasons(skill: LoadedSkill, config: KernelConfig, host: SkillHost): string[] {
  const entry = Object.hasOwn(config.skills.entries, skill.skillKey)
    ? config.skills.entries[skill.skillKey]
    : undefined;
  if (entry?.enabled === false) return [`disabled by skills.entries.${skill.skillKey}.enabled`];
  const allowBundled = config.skills.allowBundled ?? [];
  if (
    skill.source === "bundled" &&
    allowBundled.length > 0 &&
    !allowBundled.includes(skill.skillKey) &&
    !allowBundled.includes(skill.name)
  ) {
    return ["bundled, and not in skills.allowBundled"];
  }
  const manifest = skill.manifest;
  const os = manifest?.os ?? [];
  if (os.length > 0 && !os.includes(host.platform)) {
    return [`os: only on ${os.join(", ")} (this host is ${host.platform})`];
  }
  if (manifest?.always === true) return [];
  const requires = manifest?.requires;
  if (requires === undefined) return [];
  const reasons: string[] = [];
  const missingEnv = requires.env.filter((name) => !envSatisfied(name, skill, entry, host));
  if (missingEnv.length > 0) {
    reasons.push(`env: ${missingEnv.join(", ")} not set (or skills.entries.${skill.skillKey}.env)`);
  }
  const falsyConfig = requires.config.filter((path) => !configPathTruthy(config, path));
  if (falsyConfig.length > 0) reasons.push(`config: ${falsyConfig.join(", ")} not set`);
  const missingBins = requires.bins.filter((bin) => !host.hasBinary(bin));
  if (missingBins.length > 0) reasons.push(`bins: ${missingBins.join(", ")} not on PATH`);
  if (requires.anyBins.length > 0 && !requires.anyBins.some((bin) => host.hasBinary(bin))) {
    reasons.push(`anyBins: none of ${requires.anyBins.join(", ")} on PATH`);
  }
  return reasons;
}

function envSatisfied(
  name: string,
  skill: LoadedSkill,
  entry: KernelConfig["skills"]["entries"][string] | undefined,
  host: SkillHost,
): boolean {
  if (host.env[name]?.trim()) return true;
  if (entry?.env !== undefined && Object.hasOwn(entry.env, name) && entry.env[name]?.trim()) return true;
  return skill.manifest?.primaryEnv === name && entry?.apiKey !== undefined;
}

/** OpenClaw's isConfigPathTruthyWithDefaults over the parsed config (prototype keys never walked). */
function configPathTruthy(config: KernelConfig, path: string): boolean {
  const parts = path.split(".").filter(Boolean);
  if (parts.some((part) => BLOCKED_KEYS.has(part))) return false;
  let current: unknown = config;
  for (const part of parts) {
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, part)) {
      current = undefined;
      break;
    }
    current = (current as Record<string, unknown>)[part];
  }
  if (current === undefined)
    return Object.hasOwn(CONFIG_PATH_DEFAULTS, path) && CONFIG_PATH_DEFAULTS[path] === true;
  if (current === null) return false;
  if (typeof current === "boolean") return current;
  if (typeof current === "number") return current !== 0;
  if (typeof current === "string") return current.trim().length > 0;
  return true;
}
