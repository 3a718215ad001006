// Which credential a provider call needs, told before the call: the environment variables pi-ai reads for a
// built-in provider (pi-ai's own table, so the names never drift from what is read), and the message for a
// call that has none — an auth failure naming the provider and what to set, never pi's text that points to a
// `/login` command this kernel does not have. Owns: those names and that message. Does not own: reading the
// keys (pi-ai, at request time) or the profiles (auth-profiles.ts).
import { findEnvKeys } from "@earendil-works/pi-ai/compat";

/** An environment in which every variable is set: pi-ai's lookup then reports every name it reads. */
const EVERY_VARIABLE_SET: Record<string, string> = new Proxy(
  {},
  { get: (_target, name) => (typeof name === "string" ? "set" : undefined) },
);

/**
 * The environment variables pi-ai reads an API key from for `provider` (an `…_API_KEY` first), or none for a
 * provider it has no variable for (a custom provider, or one with ambient credentials such as Bedrock).
 */
export function providerKeyEnvVars(provider: string): readonly string[] {
  const names = findEnvKeys(provider.trim().toLowerCase(), EVERY_VARIABLE_SET) ?? [];
  return [...names].sort((a, b) => Number(!a.endsWith("_API_KEY")) - Number(!b.endsWith("_API_KEY")));
}

/** The provider (and auth profile) of an attempt that has no usable credential: what `missingCredentialMessage` describes. */
export interface MissingCredential {
  readonly provider: string;
  /** The auth profile the attempt ran with (it has no usable secret). */
  readonly profileId?: string | undefined;
}

/**
 * The failure of an attempt that has no credential for its provider. Classified `auth` (it says "no API key
 * found"), so recovery rotates to another profile or falls back to another model like any auth failure.
 */
export function missingCredentialMessage({ provider, profileId }: MissingCredential): string {
  const vars = providerKeyEnvVars(provider);
  const env =
    vars.length === 0
      ? ""
      : `set ${vars[0]}${vars.length > 1 ? ` (or ${vars.slice(1).join(", ")})` : ""} in the environment, or `;
  const profile =
    profileId === undefined
      ? `add an auth profile for "${provider}" (auth.profiles in the config, or auth-profiles.json in the agent dir)`
      : `give auth profile "${profileId}" a key (auth.profiles in the config, or auth-profiles.json in the agent dir)`;
  return `no API key found for provider "${provider}"${profileId === undefined ? "" : ` (auth profile "${profileId}" has none)`}: ${env}${profile}`;
}
