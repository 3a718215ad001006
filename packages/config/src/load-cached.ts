// Loading the config without building the schema when this exact text was validated before. Owns: the
// validation cache — one file per config path under the user's cache dir, holding the validated config of
// one text, keyed by a hash of that text and of the schema's sources (schema-fingerprint.ts) — and when it
// may be used. A config is validated afresh (load.ts, loaded only then) whenever anything differs: another
// text, another schema, an entry that does not parse or does not match. Only a config whose validation cannot
// depend on anything but its text is kept (no `${ENV}` reference in any parsed string or key), and never one
// that holds a secret or a value where a secret goes (a literal secret, any header value, any value under a
// credential key, any skill's env): the cache holds nothing the user would not want copied. The folder keeps
// at most CACHE_ENTRY_LIMIT entries, the least recently written removed first.
// Does not own: finding and reading the file (config-file.ts), the rules or the errors (load.ts, schema.ts).
import { createHash, randomBytes } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { type LoadConfigOptions, type LoadedConfig, readConfigFile } from "./config-file.ts";
import type { Environment } from "./env.ts";
import type { ConfigPath } from "./errors.ts";
import { findLiteralSecrets } from "./literal-secrets.ts";
import { fillMachineDefaults } from "./machine-defaults.ts";
import type { KernelConfig } from "./schema.ts";
import { CONFIG_SCHEMA_FINGERPRINT } from "./schema-fingerprint.ts";
import { secretPositionOf } from "./secrets.ts";

/** Names the validation cache's folder, or turns it off with `off`. */
export const CONFIG_CACHE_ENV_VAR = "AGENT_KERNEL_CONFIG_CACHE";

/** How many entries (config files) the validation cache keeps; the least recently written go first. */
export const CACHE_ENTRY_LIMIT = 64;

/** `loadConfig`'s options, and where the validation cache is. */
export interface LoadConfigCachedOptions extends LoadConfigOptions {
  /**
   * The validation cache's folder; `null` turns the cache off. Default: $AGENT_KERNEL_CONFIG_CACHE (`off`
   * turns it off), else $XDG_CACHE_HOME/agent-kernel/config, else <home>/.cache/agent-kernel/config, the home
   * being `homeDir`, else $HOME of `env`, else os.homedir().
   */
  readonly cacheDir?: string | null;
}

/**
 * `loadConfig` with a validation cache: the same config, the same `ConfigError`s (a text that fails is never
 * kept, so it is validated, and reported, every time), but a text validated before (by this schema) is not
 * validated again, and then neither zod nor the schema is loaded. Async because the validator is imported
 * only when it is needed.
 */
export async function loadConfigCached(options: LoadConfigCachedOptions = {}): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const file = readConfigFile(options);
  const text = file.text ?? "";
  const source = file.path ?? "(defaults)";
  const cache = openCache(options, env);
  const key = cache === undefined ? "" : cacheKey(text);
  const found = cache?.read(source, key);
  if (found !== undefined) {
    return { config: fillMachineDefaults(found, options.cpuCount), path: file.path, origin: file.origin };
  }
  const { parseJson5, validateConfig } = await import("./load.ts");
  const raw = parseJson5(text, source);
  const result = validateConfig(raw, { ...options, env, sourceName: source });
  if (!result.ok) throw result.error;
  if (cache !== undefined && isCacheable(raw, result.config)) cache.write(source, key, result.config);
  return {
    config: fillMachineDefaults(result.config, options.cpuCount),
    path: file.path,
    origin: file.origin,
  };
}

/**
 * The folder `loadConfigCached` keeps validated configs in, or undefined when the cache is off. The home is
 * `home`, else `env`'s $HOME, else os.homedir(): a caller that gives an environment gives its home too.
 */
export function configCacheDir(env: Environment = process.env, home?: string): string | undefined {
  const named = env[CONFIG_CACHE_ENV_VAR]?.trim();
  if (named === "off") return undefined;
  if (named !== undefined && named !== "") return named;
  const xdg = env.XDG_CACHE_HOME?.trim();
  if (xdg !== undefined && xdg !== "") return join(xdg, "agent-kernel", "config");
  const envHome = env.HOME?.trim();
  const base = home ?? (envHome !== undefined && envHome !== "" ? envHome : homedir());
  return join(base, ".cache", "agent-kernel", "config");
}

interface ConfigCache {
  read(source: string, key: string): KernelConfig | undefined;
  write(source: string, key: string, config: KernelConfig): void;
}

/** What an entry holds: the key it was validated under, and the config (before the machine's defaults). */
interface CacheEntry {
  readonly key: string;
  readonly config: KernelConfig;
}

function cacheKey(text: string): string {
  return createHash("sha256").update(CONFIG_SCHEMA_FINGERPRINT).update("\u0000").update(text).digest("hex");
}

/**
 * The cache in its folder, made owner-only when missing; undefined when it is off, or when the folder is not
 * one only this user can write (a link, another user's, group- or world-writable): then anyone else could
 * have put an entry there, and the config is validated instead.
 */
function openCache(options: LoadConfigCachedOptions, env: Environment): ConfigCache | undefined {
  const dir =
    options.cacheDir === null ? undefined : (options.cacheDir ?? configCacheDir(env, options.homeDir));
  if (dir === undefined) return undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stats = lstatSync(dir);
    if (!stats.isDirectory() || (stats.mode & 0o022) !== 0) return undefined;
    if (process.getuid !== undefined && stats.uid !== process.getuid()) return undefined;
  } catch {
    return undefined;
  }
  const fileOf = (source: string): string =>
    join(dir, `${createHash("sha256").update(source).digest("hex").slice(0, 32)}.json`);
  return {
    read(source, key) {
      try {
        const entry = JSON.parse(readFileSync(fileOf(source), "utf8")) as Partial<CacheEntry> | null;
        if (entry === null || entry.key !== key) return undefined;
        const config = entry.config;
        return typeof config === "object" && config !== null && !Array.isArray(config) ? config : undefined;
      } catch {
        return undefined;
      }
    },
    write(source, key, config) {
      // Written whole to a file of its own and renamed over the entry: a reader sees the old entry or the
      // new one, never a part, and two processes writing at once leave one of their (equal) entries.
      const file = fileOf(source);
      const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
      try {
        writeFileSync(temporary, JSON.stringify({ key, config } satisfies CacheEntry), {
          mode: 0o600,
          flag: "wx",
        });
        renameSync(temporary, file);
        pruneEntries(dir, file);
      } catch {
        // A cache that cannot be written (a full disk, a read-only home) only costs the next start a validation.
        rmSync(temporary, { force: true });
      }
    },
  };
}

/**
 * Keeps the folder at CACHE_ENTRY_LIMIT entries, removing the least recently written (one per config path
 * ever loaded would otherwise pile up); `kept`, the entry just written, stays. Another process's entry
 * removed here only costs its next start a validation.
 */
function pruneEntries(dir: string, kept: string): void {
  const names = readdirSync(dir).filter((name) => name.endsWith(".json"));
  if (names.length <= CACHE_ENTRY_LIMIT) return;
  const aged: { file: string; written: number }[] = [];
  for (const name of names) {
    const file = join(dir, name);
    if (file === kept) continue;
    try {
      aged.push({ file, written: statSync(file).mtimeMs });
    } catch {
      // gone already (another process pruned it)
    }
  }
  aged.sort((a, b) => a.written - b.written);
  for (const { file } of aged.slice(0, names.length - CACHE_ENTRY_LIMIT)) rmSync(file, { force: true });
}

/**
 * Whether a validated config may be kept: nothing in it as parsed references the environment (so its
 * validation depends on the text alone; decided on the parsed strings and keys, since a JSON5 escape such as
 * `"\u0024{KEY}"` becomes a reference only when parsed), it holds nothing that is or may be a secret, and the
 * config is plain JSON (it reads back equal).
 */
function isCacheable(raw: unknown, config: KernelConfig): boolean {
  return !holdsReferenceOrSecretSlot(raw, []) && findLiteralSecrets(raw).length === 0 && isPlainJson(config);
}

/**
 * Whether `node` (the file as parsed) has a string or key holding "${" (any env.ts reference, escaped or not,
 * contains it), or a value where a secret goes: below a `headers` map, under a credential key (secrets.ts's
 * list, the one the redaction and the literal-secret check use), or in a skill's `env`. Conservative on
 * purpose: such a config is only validated every time.
 */
function holdsReferenceOrSecretSlot(node: unknown, path: ConfigPath): boolean {
  if (typeof node === "string") {
    if (node.includes("${")) return true;
    return node !== "" && (secretPositionOf(path) !== undefined || isSkillEnv(path));
  }
  if (typeof node === "number" || typeof node === "bigint") {
    const position = secretPositionOf(path);
    return position === "header" || position === "credential" || isSkillEnv(path);
  }
  if (Array.isArray(node))
    return node.some((item, index) => holdsReferenceOrSecretSlot(item, [...path, index]));
  if (node !== null && typeof node === "object") {
    return Object.entries(node).some(
      ([key, item]) => key.includes("${") || holdsReferenceOrSecretSlot(item, [...path, key]),
    );
  }
  return false;
}

/** skills.entries.<name>.env.<VAR>: a skill's environment, where its keys go. */
function isSkillEnv(path: ConfigPath): boolean {
  return path.length > 4 && path[0] === "skills" && path[1] === "entries" && path[3] === "env";
}

/** Only null, booleans, strings, finite numbers, arrays and plain objects, with no `undefined` member. */
function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === "boolean" || typeof value === "string") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (typeof value !== "object") return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.values(value).every(isPlainJson);
}
