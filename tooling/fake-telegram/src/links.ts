// Which URLs of a formatted text become links, the way Telegram's server decides it (tdlib's
// `LinkManager::check_link`, `LinkManager::get_link_user_id` and `parse_url`, read from tdlib/td): a link in
// `<a href>` / `[text](url)` whose URL fails the check is DROPPED (the text stays, no entity, no error), a valid
// one is stored NORMALISED (`example.com` → `http://example.com/`, `https://A.com` → `https://a.com/`,
// spaces in the path → `%20`), and `tg://user?id=<id>` becomes a mention of that user. Owns only these rules;
// the parsers (markdown-v2.ts, html.ts) call them and formatted-text.ts resolves mentioned users.
//
// The rules, in order (a URL is checked after HTML references / MarkdownV2 escapes are decoded):
// 1. `tg:`, `ton:`, `tonsite:` (any letter case, optional `//`) make an app link: the rest must parse as below,
//    must not start with `http://`, be https, carry `user@`, a `:port` or an IPv6 host, and its host may hold
//    only ASCII letters, digits, `-`, `_` (tonsite also `.`) → `tg://<host><query>`.
// 2. Otherwise an optional scheme: `http://` or `https://` (any case); any other `<scheme>://` is refused
//    ("Unsupported URL protocol"); without `://` the whole text is taken as `[userinfo@]host[:port][/?#…]`
//    (so `example.com/x` is `http://example.com/x`).
// 3. A `:port` must be a decimal 1–65535 (leading zeros allowed); the host must not be empty or "."; an
//    `[IPv6]` host must be a valid IPv6 address; a host (lower-cased) and userinfo may hold only ASCII letters,
//    digits, `. - _ ! $ , ~ * ' ( ) ; & + =`, `%XX` escapes and non-ASCII characters (userinfo also `:`).
// 4. A web link's host must contain a dot (or be IPv6): `localhost`, `foo` are refused.
// 5. The path/query/fragment keeps everything, trailing whitespace trimmed, control characters and spaces
//    %-encoded, `/` prepended when missing or empty.

import { isIPv6 } from "node:net";
import type { TgMessageEntity } from "./types.ts";

/** tdlib's `UserId::is_valid`: 1 … 2^40 − 1. */
const MAX_USER_ID = 2 ** 40 - 1;

const URL_PART_PUNCTUATION = new Set([
  ".",
  "-",
  "_",
  "!",
  "$",
  ",",
  "~",
  "*",
  "'",
  "(",
  ")",
  ";",
  "&",
  "+",
  "=",
]);

function isAsciiAlnum(char: string): boolean {
  return /^[A-Za-z0-9]$/.test(char);
}

/** tdlib's `is_space`. */
function isSpace(char: string | undefined): boolean {
  return char === " " || char === "\t" || char === "\r" || char === "\n" || char === "\0" || char === "\v";
}

function lowerAscii(text: string): string {
  return text.replace(/[A-Z]/g, (char) => char.toLowerCase());
}

/** Reads up to (not including) the first of `stops`; returns the part and the index it stopped at. */
function readTill(text: string, from: number, stops: string): { part: string; end: number } {
  let end = from;
  while (end < text.length && !stops.includes(text.charAt(end))) end++;
  return { part: text.slice(from, end), end };
}

function urlPartIsValid(part: string, allowColon: boolean): boolean {
  for (let i = 0; i < part.length; i++) {
    const char = part.charAt(i);
    if (isAsciiAlnum(char) || URL_PART_PUNCTUATION.has(char) || (allowColon && char === ":")) continue;
    if (char === "%") {
      if (/^[0-9A-Fa-f]{2}$/.test(part.slice(i + 1, i + 3))) {
        i += 2;
        continue;
      }
      return false;
    }
    if (char.charCodeAt(0) >= 128) continue; // plain non-ASCII characters are allowed
    return false;
  }
  return true;
}

interface ParsedUrl {
  readonly protocol: "http" | "https";
  readonly userinfo: string;
  readonly host: string;
  readonly isIpv6: boolean;
  /** 0 when none was written. */
  readonly specifiedPort: number;
  /** Starts with "/". */
  readonly query: string;
}

/** tdlib's `parse_url`: undefined where it answers an error. */
function parseUrl(url: string): ParsedUrl | undefined {
  const scheme = readTill(url, 0, ":/?#@[]");
  let protocol: "http" | "https" = "http";
  let index = 0;
  if (url.startsWith("://", scheme.end)) {
    const name = lowerAscii(scheme.part);
    if (name !== "http" && name !== "https") return undefined; // "Unsupported URL protocol"
    protocol = name;
    index = scheme.end + 3;
  }
  const authority = readTill(url, index, "/?#");
  const userinfoHostPort = authority.part;
  let colon = userinfoHostPort.length - 1;
  while (colon > 0 && !":]@".includes(userinfoHostPort.charAt(colon))) colon--;
  let port = 0;
  let userinfoHost = userinfoHostPort;
  if (colon > 0 && userinfoHostPort.charAt(colon) === ":") {
    let portText = userinfoHostPort.slice(colon + 1);
    while (portText.length > 1 && portText.startsWith("0")) portText = portText.slice(1);
    port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : -1;
    if (port === 0) port = -1;
    userinfoHost = userinfoHostPort.slice(0, colon);
  }
  if (port < 0 || port > 65_535) return undefined; // "Wrong port number specified in the URL"
  const at = userinfoHost.lastIndexOf("@");
  const userinfo = at === -1 ? "" : userinfoHost.slice(0, at);
  const host = userinfoHost.slice(at + 1);
  let isIpv6 = false;
  if (host.startsWith("[") && host.endsWith("]") && host.length >= 2) {
    if (!isIPv6(host.slice(1, -1))) return undefined; // "Wrong IPv6 address specified in the URL"
    isIpv6 = true;
  }
  if (host === "" || host === ".") return undefined; // "URL host is empty" / "Host is invalid"

  let rest = url.slice(authority.end);
  while (rest.length > 0 && isSpace(rest.charAt(rest.length - 1))) rest = rest.slice(0, -1);
  if (rest === "") rest = "/";
  let query = rest.startsWith("/") ? "" : "/";
  for (const char of rest) {
    const code = char.codePointAt(0) ?? 0;
    query += code <= 0x20 ? `%${code.toString(16).toUpperCase().padStart(2, "0")}` : char;
  }

  const lowerHost = lowerAscii(host);
  if (isIpv6) {
    if (!/^[0-9a-f:.]*$/.test(lowerHost.slice(1, -1))) return undefined;
  } else if (!urlPartIsValid(lowerHost, false) || !urlPartIsValid(userinfo, true)) {
    return undefined; // "Disallowed character in URL host/userinfo" or "Wrong percent-encoded symbol"
  }
  return { protocol, userinfo, host: lowerHost, isIpv6, specifiedPort: port, query };
}

function startsWithIgnoringCase(text: string, prefix: string): boolean {
  return lowerAscii(text.slice(0, prefix.length)) === prefix;
}

/**
 * tdlib's `LinkManager::get_checked_link`: the normalised link, or undefined when Telegram would drop the
 * link (see the rules at the top of this file).
 */
export function checkLink(link: string): string | undefined {
  let rest = link;
  let appScheme: "tg" | "ton" | "tonsite" | undefined;
  for (const scheme of ["tg", "ton", "tonsite"] as const) {
    if (startsWithIgnoringCase(rest, `${scheme}:`)) {
      appScheme = scheme;
      rest = rest.slice(scheme.length + 1);
      break;
    }
  }
  if (appScheme !== undefined && rest.startsWith("//")) rest = rest.slice(2);
  const url = parseUrl(rest);
  if (url === undefined) return undefined;
  if (appScheme !== undefined) {
    if (
      startsWithIgnoringCase(rest, "http://") ||
      url.protocol === "https" ||
      url.userinfo !== "" ||
      url.specifiedPort !== 0 ||
      url.isIpv6
    ) {
      return undefined; // "Wrong tg URL"
    }
    const query = url.query.length > 1 && url.query.charAt(1) === "?" ? url.query.slice(1) : url.query;
    for (const char of url.host) {
      if (!isAsciiAlnum(char) && char !== "-" && char !== "_" && !(appScheme === "tonsite" && char === ".")) {
        return undefined; // "Unallowed characters in URL host"
      }
    }
    return `${appScheme}://${url.host}${query}`;
  }
  if (!url.host.includes(".") && !url.isIpv6) return undefined; // "Wrong HTTP URL"
  return `${url.protocol}://${url.userinfo === "" ? "" : `${url.userinfo}@`}${url.host}${
    url.specifiedPort > 0 ? `:${url.specifiedPort}` : ""
  }${url.query}`;
}

/**
 * tdlib's `LinkManager::get_link_user_id`: the user a `tg://user?id=<id>` link mentions (any letter case,
 * `tg:user?id=` and `tg://user/?id=` too), or undefined. The id must be a canonical decimal in 1 … 2^40 − 1.
 */
export function linkUserId(link: string): number | undefined {
  let url = lowerAscii(link);
  if (!url.startsWith("tg:")) return undefined;
  url = url.slice(3);
  if (url.startsWith("//")) url = url.slice(2);
  if (!url.startsWith("user") || (url.length > 4 && !"/?#".includes(url.charAt(4)))) return undefined;
  url = url.slice(4);
  if (url.startsWith("/")) url = url.slice(1);
  if (!url.startsWith("?")) return undefined;
  url = url.slice(1);
  const hash = url.indexOf("#");
  if (hash !== -1) url = url.slice(0, hash);
  for (const parameter of url.split("&")) {
    const equals = parameter.indexOf("=");
    const key = equals === -1 ? parameter : parameter.slice(0, equals);
    if (key !== "id") continue;
    const value = equals === -1 ? "" : parameter.slice(equals + 1);
    // to_integer_safe: the text must be exactly the decimal form of the number
    if (!/^-?[0-9]+$/.test(value) || String(Number(value)) !== value) return undefined;
    const id = Number(value);
    return id > 0 && id <= MAX_USER_ID ? id : undefined;
  }
  return undefined;
}

/**
 * The entity a link of a formatted text becomes: a `text_mention` for `tg://user?id=<id>` (its `user` carries
 * only the id until the server fills in the user it knows), a `text_link` with the normalised URL, or
 * undefined when Telegram drops the link.
 */
export function linkEntity(offset: number, length: number, url: string): TgMessageEntity | undefined {
  const userId = linkUserId(url);
  if (userId !== undefined) {
    return { type: "text_mention", offset, length, user: { id: userId, is_bot: false, first_name: "" } };
  }
  const checked = checkLink(url);
  return checked === undefined ? undefined : { type: "text_link", offset, length, url: checked };
}
