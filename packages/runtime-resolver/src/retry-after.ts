// How long a provider asked to wait before the next request: `retry-after-ms` (OpenAI, Anthropic), else
// `retry-after` in seconds or as an HTTP date, the precedence of the OpenAI and Anthropic SDKs and pi-ai's
// own retry. Owns: reading those headers. Does not own: whether to wait (the turn executor's recovery).

/** Anything with `get(name)`: a fetch `Headers`, or a plain lookup. */
export interface HeaderLookup {
  get(name: string): string | null | undefined;
}

/** The wait in ms a response asked for; undefined without a usable header (negative or unparsable). */
export function retryAfterMs(headers: HeaderLookup, now: number = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms) {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.ceil(value);
  }
  const raw = headers.get("retry-after")?.trim();
  if (!raw) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(raw)) return Math.ceil(Number(raw) * 1000);
  // An HTTP date names its day and month (`Wed, 21 Oct 2015 07:28:00 GMT`); Date.parse takes "-3" as a year.
  const date = /[a-z]/i.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
