// Auth profiles: which credentials exist for a provider and in which order to
// try them (OpenClaw 2026.9.6 `auth-profiles/order.ts`). Owns: the profile
// store read from config `auth.profiles` and `<agentDir>/auth-profiles.json`,
// eligibility, order resolution (explicit order; else OAuth > token > api_key
// and round-robin by last use; the session's pinned profile first; profiles
// in cooldown last, soonest expiry first) and redaction. Does not own: the
// cooldown arithmetic (auth-cooldown.ts) or storing usage (auth-state.ts).
//
// `<agentDir>/auth-profiles.json` (optional; the same shape as OpenClaw's):
//   { "version": 1,
//     "profiles": { "<id>": { "provider": "anthropic", "type": "api_key", "key": "sk-..." }
//                   | { "provider": "x", "type": "token", "token": "...", "expires"?: <ms> }
//                   | { "provider": "x", "type": "oauth", "access": "...", "refresh"?: "...", "expires"?: <ms>, "email"?: "..." } },
//     "order"?: { "<provider>": ["<id>", ...] } }
// A config profile (`auth.profiles.<id>` with `apiKey`/`token`) overrides the file's secret for the same id.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { KernelConfig } from "@agent-kernel/config";
import { isProfileInCooldown, type ProfileUsageStats, resolveProfileUnusableUntil } from "./auth-cooldown.ts";

export type AuthProfileType = "api_key" | "token" | "oauth";

/** A credential. The secret fields are only ever handed to the provider call (`secretOf`). */
export interface AuthCredential {
  readonly provider: string;
  readonly type: AuthProfileType;
  readonly key?: string;
  readonly token?: string;
  readonly access?: string;
  readonly refresh?: string;
  readonly expires?: number;
  readonly email?: string;
}

export interface AuthProfile extends AuthCredential {
  readonly id: string;
  /** Where the credential came from. */
  readonly source: "config" | "file" | "config+file";
}

/** A profile safe to log or store: no secret, only whether one is present and its last four characters. */
export interface AuthProfileDescription {
  readonly id: string;
  readonly provider: string;
  readonly type: AuthProfileType;
  readonly source: AuthProfile["source"];
  readonly hasSecret: boolean;
  readonly secretHint?: string;
  readonly email?: string;
  readonly expires?: number;
}

export const AUTH_PROFILES_FILE = "auth-profiles.json";

const lower = (value: string) => value.trim().toLowerCase();

function parseFileCredential(id: string, raw: unknown, file: string): AuthCredential {
  const where = `${file}: profiles["${id}"]`;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new Error(`${where}: expected an object`);
  const record = raw as Record<string, unknown>;
  const provider = record.provider;
  const type = record.type;
  if (typeof provider !== "string" || provider.trim() === "")
    throw new Error(`${where}.provider: expected a provider id`);
  if (type !== "api_key" && type !== "token" && type !== "oauth") {
    throw new Error(`${where}.type: expected "api_key", "token" or "oauth", found ${JSON.stringify(type)}`);
  }
  const text = (key: string): Record<string, string> => {
    const value = record[key];
    if (value === undefined) return {};
    if (typeof value !== "string") throw new Error(`${where}.${key}: expected a string`);
    return { [key]: value };
  };
  const expires = record.expires;
  if (expires !== undefined && (typeof expires !== "number" || !Number.isFinite(expires))) {
    throw new Error(`${where}.expires: expected epoch milliseconds`);
  }
  return {
    provider: lower(provider),
    type,
    ...text("key"),
    ...text("token"),
    ...text("access"),
    ...text("refresh"),
    ...text("email"),
    ...(expires === undefined ? {} : { expires }),
  };
}

/** Reads `<agentDir>/auth-profiles.json`; a missing file is an empty store, a bad one a clear error. */
export function readAuthProfilesFile(agentDir: string): {
  profiles: Record<string, AuthCredential>;
  order: Record<string, string[]>;
} {
  const file = join(agentDir, AUTH_PROFILES_FILE);
  if (!existsSync(file)) return { profiles: {}, order: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: not valid JSON (${(error as Error).message})`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error(`${file}: expected {"version": 1, "profiles": {...}}`);
  }
  const { profiles = {}, order = {} } = parsed as { profiles?: unknown; order?: unknown };
  if (profiles === null || typeof profiles !== "object" || Array.isArray(profiles)) {
    throw new Error(`${file}: "profiles" must be an object of profile id → credential`);
  }
  const credentials: Record<string, AuthCredential> = {};
  for (const [id, raw] of Object.entries(profiles)) credentials[id] = parseFileCredential(id, raw, file);
  const orders: Record<string, string[]> = {};
  if (order !== null && typeof order === "object" && !Array.isArray(order)) {
    for (const [provider, ids] of Object.entries(order)) {
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) {
        throw new Error(`${file}: order["${provider}"] must be a list of profile ids`);
      }
      orders[lower(provider)] = ids;
    }
  }
  return { profiles: credentials, order: orders };
}

/** The secret a provider call needs, or undefined when the profile has none. */
export function secretOf(credential: AuthCredential): string | undefined {
  const secret =
    credential.type === "api_key"
      ? credential.key
      : credential.type === "token"
        ? credential.token
        : credential.access;
  return secret?.trim() ? secret : undefined;
}

/** A description for logs, runs and transcripts: never the secret. */
export function describeProfile(profile: AuthProfile): AuthProfileDescription {
  const secret = secretOf(profile);
  return {
    id: profile.id,
    provider: profile.provider,
    type: profile.type,
    source: profile.source,
    hasSecret: secret !== undefined,
    ...(secret !== undefined && secret.length >= 12 ? { secretHint: `…${secret.slice(-4)}` } : {}),
    ...(profile.email === undefined ? {} : { email: profile.email }),
    ...(profile.expires === undefined ? {} : { expires: profile.expires }),
  };
}

/** Replaces every occurrence of the given secrets in a text (log lines, error messages) with `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)) {
    out = out.split(secret).join("[redacted]");
  }
  return out;
}

export class AuthProfileStore {
  readonly #profiles: ReadonlyMap<string, AuthProfile>;
  readonly #storedOrder: Readonly<Record<string, readonly string[]>>;
  readonly #configOrder: Readonly<Record<string, readonly string[]>>;
  readonly #configProfileIds: ReadonlySet<string>;
  readonly #configModes: ReadonlyMap<string, AuthProfileType>;

  private constructor(
    profiles: Map<string, AuthProfile>,
    storedOrder: Record<string, string[]>,
    config: KernelConfig["auth"],
  ) {
    this.#profiles = profiles;
    this.#storedOrder = storedOrder;
    this.#configOrder = Object.fromEntries(Object.entries(config.order).map(([p, ids]) => [lower(p), ids]));
    this.#configProfileIds = new Set(Object.keys(config.profiles));
    this.#configModes = new Map(Object.entries(config.profiles).map(([id, p]) => [id, p.mode]));
  }

  /**
   * The profiles of config `auth.profiles` and `<agentDir>/auth-profiles.json`
   * (when `agentDir` is given); a config profile overrides the file's secret.
   * Inline `models.providers.<id>.apiKey` values become `<id>:inline` profiles.
   */
  static load(config: KernelConfig, agentDir?: string): AuthProfileStore {
    const file = agentDir === undefined ? { profiles: {}, order: {} } : readAuthProfilesFile(agentDir);
    const profiles = new Map<string, AuthProfile>();
    for (const [id, credential] of Object.entries(file.profiles))
      profiles.set(id, { ...credential, id, source: "file" });
    for (const [id, p] of Object.entries(config.auth.profiles)) {
      const fromFile = profiles.get(id);
      const secret =
        p.mode === "api_key"
          ? { key: p.apiKey }
          : p.mode === "token"
            ? { token: p.token }
            : { access: p.token };
      const hasConfigSecret = Object.values(secret).some((value) => value !== undefined && value !== "");
      const base = fromFile && fromFile.provider === p.provider ? fromFile : undefined;
      profiles.set(id, {
        ...(base ?? {}),
        id,
        provider: p.provider,
        type: p.mode,
        ...(hasConfigSecret ? secret : {}),
        ...(p.email === undefined ? {} : { email: p.email }),
        source: base ? "config+file" : "config",
      } as AuthProfile);
    }
    for (const [providerId, provider] of Object.entries(config.models.providers)) {
      if (provider.apiKey === undefined) continue;
      const id = `${lower(providerId)}:inline`;
      if (!profiles.has(id))
        profiles.set(id, {
          id,
          provider: lower(providerId),
          type: "api_key",
          key: provider.apiKey,
          source: "config",
        });
    }
    return new AuthProfileStore(profiles, file.order, config.auth);
  }

  get(profileId: string): AuthProfile | undefined {
    return this.#profiles.get(profileId);
  }

  /** Every profile, described without secrets. */
  describeAll(): AuthProfileDescription[] {
    return [...this.#profiles.values()].map(describeProfile);
  }

  /** Every secret held, for redacting text that may contain one. */
  secrets(): string[] {
    return [...this.#profiles.values()].flatMap((p) =>
      [secretOf(p), p.refresh].filter((s): s is string => Boolean(s)),
    );
  }

  /** Profiles usable for the provider now: it has a secret, the provider matches and the config mode agrees. */
  isEligible(profileId: string, provider: string): boolean {
    const profile = this.#profiles.get(profileId);
    if (!profile || profile.provider !== lower(provider)) return false;
    const mode = this.#configModes.get(profileId);
    if (mode !== undefined && mode !== profile.type && !(mode === "oauth" && profile.type === "token"))
      return false;
    return secretOf(profile) !== undefined || (profile.type === "oauth" && Boolean(profile.refresh));
  }

  /**
   * The order to try a provider's profiles in: the stored order (the file's
   * `order`), else config `auth.order`, else the config's profiles for the
   * provider, else every profile of it; ineligible ones dropped. With an
   * explicit order: that order, profiles in cooldown moved last (soonest
   * first). Without: OAuth, token, api_key; unexpired OAuth first; least
   * recently used first; cooldown last. `preferredProfile` (the session's
   * pin) leads when it is in the list.
   */
  resolveOrder(params: {
    provider: string;
    usage: Readonly<Record<string, ProfileUsageStats>>;
    now: number;
    forModel?: string | undefined;
    preferredProfile?: string | undefined;
  }): string[] {
    const provider = lower(params.provider);
    const explicit = this.#storedOrder[provider] ?? this.#configOrder[provider];
    const ofProvider = (ids: Iterable<string>) =>
      [...ids].filter((id) => this.#profiles.get(id)?.provider === provider);
    const configured = ofProvider(this.#configProfileIds);
    const base = explicit ?? (configured.length > 0 ? configured : ofProvider(this.#profiles.keys()));
    const eligible = [...new Set(base.filter((id) => this.isEligible(id, provider)))];
    const types = Object.fromEntries(eligible.map((id) => [id, this.#profiles.get(id)]));
    return orderProfiles({
      ids: eligible,
      explicit: explicit !== undefined && explicit.length > 0,
      type: (id) => types[id]?.type,
      expires: (id) => types[id]?.expires,
      usage: params.usage,
      now: params.now,
      forModel: params.forModel,
      provider,
      preferredProfile: params.preferredProfile,
    });
  }
}

/** The ordering rules alone, over ids whose type and usage are known (OpenClaw's orderProfilesByMode). */
export function orderProfiles(params: {
  ids: readonly string[];
  explicit: boolean;
  type: (id: string) => AuthProfileType | undefined;
  expires?: (id: string) => number | undefined;
  usage: Readonly<Record<string, ProfileUsageStats>>;
  now: number;
  forModel?: string | undefined;
  provider?: string | undefined;
  preferredProfile?: string | undefined;
}): string[] {
  const { usage, now } = params;
  const inCooldown = (id: string) => isProfileInCooldown(usage[id], now, params.forModel, params.provider);
  const until = (id: string) => resolveProfileUnusableUntil(usage[id] ?? {}, params.forModel) ?? now;
  const available = params.ids.filter((id) => !inCooldown(id));
  const cooling = params.ids
    .filter(inCooldown)
    .map((id) => ({ id, until: until(id) }))
    .sort((a, b) => a.until - b.until)
    .map((entry) => entry.id);
  const typeScore = (id: string) => {
    const type = params.type(id);
    return type === "oauth" ? 0 : type === "token" ? 1 : type === "api_key" ? 2 : 3;
  };
  const expiryScore = (id: string) => {
    const expires = params.expires?.(id);
    return params.type(id) === "oauth" && expires !== undefined && expires <= now ? 1 : 0;
  };
  const sorted = params.explicit
    ? available
    : available
        .map((id) => ({ id, t: typeScore(id), e: expiryScore(id), used: usage[id]?.lastUsed ?? 0 }))
        .sort((a, b) => a.t - b.t || a.e - b.e || a.used - b.used)
        .map((entry) => entry.id);
  const ordered = [...sorted, ...cooling];
  const preferred = params.preferredProfile;
  return preferred !== undefined && ordered.includes(preferred)
    ? [preferred, ...ordered.filter((id) => id !== preferred)]
    : ordered;
}
