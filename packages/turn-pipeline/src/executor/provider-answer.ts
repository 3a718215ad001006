// What an attempt can know about its provider beyond pi's error text. Owns: the credential check made before
// an attempt sends anything (the check pi's own `prompt` makes, answered with the kernel's message naming
// the provider and the variable or profile to set, never pi's `/login` text; `continue` makes none before the
// request), and the wait a refusing provider asked for (`Retry-After`), read from the HTTP response the
// attempt's requests got through the fetch the request hook hands to pi-ai. Does not own: what to do about
// either (recovery.ts) or the message's wording (runtime-resolver).
import { missingCredentialMessage, retryAfterMs } from "@agent-kernel/runtime-resolver";
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ModelRuntime } from "@earendil-works/pi-coding-agent";

/**
 * Why an attempt with `model` on `modelRuntime` cannot authenticate, or undefined when it can: a key from
 * the profile, the environment (pi-ai's variables), a keyless custom provider, or ambient credentials.
 */
export async function missingCredential(
  modelRuntime: ModelRuntime,
  model: Model<Api>,
  profileId: string | undefined,
): Promise<string | undefined> {
  if (modelRuntime.hasConfiguredAuth(model.provider)) return undefined;
  if ((await modelRuntime.checkAuth(model.provider).catch(() => undefined)) !== undefined) return undefined;
  return missingCredentialMessage({ provider: model.provider, profileId });
}

/** Watches the HTTP answers of an attempt's model requests for a requested wait. */
export class ProviderAnswerWatch {
  /** The wait (ms) the last refused request asked for; undefined when it asked for none. */
  retryAfterMs: number | undefined;

  /** The fetch the attempt's requests are made with. */
  readonly fetch: typeof globalThis.fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    // Only a refusal carries a wait worth honouring: 429, and 503 (overloaded) as RFC 9110 allows.
    this.retryAfterMs =
      response.status === 429 || response.status === 503 ? retryAfterMs(response.headers) : undefined;
    return response;
  };
}
