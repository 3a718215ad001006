// The SSRF guard of `web_fetch`: which network targets a model-chosen URL may reach. Owns: classifying an IP
// address (loopback, private, link-local, CGNAT, multicast, reserved, IPv6 unique-local, and IPv4 addresses
// carried inside IPv6: mapped, NAT64, 6to4), the host-name rules (blocked names first, then exact allowed
// names, then internal-looking names), and a DNS lookup for Node's HTTP client that checks every address a
// name resolves to and hands the client only checked addresses — the connection goes to the address that
// was checked, so a name that resolves differently the second time (DNS rebinding) gains nothing. Does not
// own: the HTTP exchange, redirects or limits (web-fetch.ts), which asks this module at every hop.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

/** What a `web_fetch` may reach besides public addresses (`tools.web.fetch.ssrfPolicy`). */
export interface SsrfPolicy {
  /** Every internal address allowed (OpenClaw's `dangerouslyAllowPrivateNetwork`). */
  readonly allowPrivateNetwork?: boolean | undefined;
  /** Exact host names (or IP literals) allowed whatever they resolve to. */
  readonly allowedHostnames?: readonly string[] | undefined;
  /** Host names never reached (`*.example.com` matches subdomains, not the apex); checked first. */
  readonly blockedHostnames?: readonly string[] | undefined;
}

/** A target the guard refuses; the message says which host, which address and why. */
export class SsrfBlockedError extends Error {
  override readonly name = "SsrfBlockedError";
}

/** Resolves a host name to all its addresses (dns.lookup's shape; tests pass their own). */
export type HostResolver = (hostname: string) => Promise<readonly LookupAddress[]>;

const systemResolver: HostResolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses);
    });
  });

function rangeList(ranges: readonly [string, number, "ipv4" | "ipv6", string][]): {
  list: BlockList;
  reasons: readonly [BlockList, string][];
} {
  const list = new BlockList();
  const reasons: [BlockList, string][] = [];
  for (const [network, prefix, family, reason] of ranges) {
    list.addSubnet(network, prefix, family);
    const single = new BlockList();
    single.addSubnet(network, prefix, family);
    reasons.push([single, reason]);
  }
  return { list, reasons };
}

// IANA special-purpose ranges a fetch must not reach by default.
const IPV4_INTERNAL = rangeList([
  ["0.0.0.0", 8, "ipv4", "this-network"],
  ["10.0.0.0", 8, "ipv4", "private"],
  ["100.64.0.0", 10, "ipv4", "carrier-grade NAT"],
  ["127.0.0.0", 8, "ipv4", "loopback"],
  ["169.254.0.0", 16, "ipv4", "link-local"],
  ["172.16.0.0", 12, "ipv4", "private"],
  ["192.0.0.0", 24, "ipv4", "IETF protocol assignments"],
  ["192.0.2.0", 24, "ipv4", "documentation"],
  ["192.88.99.0", 24, "ipv4", "6to4 relay"],
  ["192.168.0.0", 16, "ipv4", "private"],
  ["198.18.0.0", 15, "ipv4", "benchmarking"],
  ["198.51.100.0", 24, "ipv4", "documentation"],
  ["203.0.113.0", 24, "ipv4", "documentation"],
  ["224.0.0.0", 4, "ipv4", "multicast"],
  ["240.0.0.0", 4, "ipv4", "reserved"],
]);
const IPV6_INTERNAL = rangeList([
  ["::", 128, "ipv6", "unspecified"],
  ["::1", 128, "ipv6", "loopback"],
  ["100::", 64, "ipv6", "discard-only"],
  ["2001:db8::", 32, "ipv6", "documentation"],
  ["fc00::", 7, "ipv6", "unique local"],
  ["fe80::", 10, "ipv6", "link-local"],
  ["fec0::", 10, "ipv6", "site-local"],
  ["ff00::", 8, "ipv6", "multicast"],
]);

/** An IPv6 address as 8 sixteen-bit groups (`::` expanded, a dotted IPv4 tail converted); undefined when malformed. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const octets = dotted[1].split(".").map(Number);
    const [a = 0, b = 0, c = 0, d = 0] = octets;
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return undefined;
  const groups = [...head, ...Array.from({ length: missing }, () => "0"), ...tail].map((group) =>
    Number.parseInt(group, 16),
  );
  return groups.length === 8 && groups.every((group) => group >= 0 && group <= 0xffff) ? groups : undefined;
}

const ipv4FromGroups = (high: number, low: number): string =>
  `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/** The IPv4 address an IPv6 address carries (mapped, IPv4-compatible, NAT64 or 6to4), if any. */
function embeddedIpv4(groups: readonly number[]): string | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroHead = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroHead && g5 === 0xffff) return ipv4FromGroups(g6, g7); // ::ffff:a.b.c.d
  if (zeroHead && g5 === 0 && (g6 !== 0 || g7 > 1)) return ipv4FromGroups(g6, g7); // ::a.b.c.d (deprecated)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return ipv4FromGroups(g6, g7); // 64:ff9b::a.b.c.d (NAT64)
  }
  if (g0 === 0x2002) return ipv4FromGroups(g1, g2); // 2002:a.b.c.d::/48 (6to4)
  return undefined;
}

/**
 * Why an address is internal ("loopback", "private", …), or undefined for a public address. An IPv6 address
 * carrying an IPv4 one is judged by that IPv4 address too; a string that is no IP address is "not an IP
 * address" (refused: the guard never connects to what it could not classify).
 */
export function internalAddressReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) {
    if (!IPV4_INTERNAL.list.check(address, "ipv4")) return undefined;
    return IPV4_INTERNAL.reasons.find(([list]) => list.check(address, "ipv4"))?.[1] ?? "internal";
  }
  if (family !== 6) return "not an IP address";
  const groups = ipv6Groups(address);
  if (!groups) return "not an IP address";
  const carried = embeddedIpv4(groups);
  if (carried !== undefined) {
    const reason = internalAddressReason(carried);
    if (reason !== undefined) return `${reason} (IPv4 ${carried} inside IPv6)`;
  }
  const normalized = groups.map((group) => group.toString(16)).join(":");
  if (!IPV6_INTERNAL.list.check(normalized, "ipv6")) return undefined;
  return IPV6_INTERNAL.reasons.find(([list]) => list.check(normalized, "ipv6"))?.[1] ?? "internal";
}

/** A host name as compared: lower case, without brackets and one trailing dot. */
export function normalizeHostname(hostname: string): string {
  let host = hostname.trim().toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host.endsWith(".")) host = host.slice(0, -1);
  return host;
}

function matchesHostPattern(host: string, pattern: string): boolean {
  const normalized = normalizeHostname(pattern);
  if (normalized.startsWith("*.")) return host.endsWith(normalized.slice(1));
  return host === normalized;
}

/** Names that only ever mean something inside a network (OpenClaw refuses them by name as well). */
function internalHostnameReason(host: string): string | undefined {
  if (host === "localhost" || host.endsWith(".localhost")) return "a localhost name";
  if (host.endsWith(".local") || host.endsWith(".internal") || host.endsWith(".lan")) {
    return "an internal name";
  }
  if (host === "metadata" || host === "metadata.google.internal") return "a cloud metadata name";
  return undefined;
}

/** The guard over one policy: what `web_fetch` asks before each hop and what its HTTP client resolves through. */
export class SsrfGuard {
  readonly #policy: SsrfPolicy;
  readonly #resolve: HostResolver;

  constructor(policy: SsrfPolicy = {}, resolve: HostResolver = systemResolver) {
    this.#policy = policy;
    this.#resolve = resolve;
  }

  /** Whether the host is one the policy lets through whatever it resolves to. */
  #allowedHost(host: string): boolean {
    if (this.#policy.allowPrivateNetwork === true) return true;
    return (this.#policy.allowedHostnames ?? []).some((allowed) => normalizeHostname(allowed) === host);
  }

  /**
   * Checks a URL's host before any connection: blocked names, then (unless allowed) internal names and IP
   * literals. Throws `SsrfBlockedError`. A name's addresses are checked when it is resolved (`lookup`).
   */
  checkHost(hostname: string): void {
    const host = normalizeHostname(hostname);
    if ((this.#policy.blockedHostnames ?? []).some((pattern) => matchesHostPattern(host, pattern))) {
      throw new SsrfBlockedError(`${host} is blocked by tools.web.fetch.ssrfPolicy.blockedHostnames`);
    }
    if (this.#allowedHost(host)) return;
    if (isIP(host) !== 0) {
      const reason = internalAddressReason(host);
      if (reason !== undefined) throw new SsrfBlockedError(`${host} is a ${reason} address`);
      return;
    }
    const nameReason = internalHostnameReason(host);
    if (nameReason !== undefined) throw new SsrfBlockedError(`${host} is ${nameReason}`);
  }

  /** Every address of `hostname`, each checked (one internal address refuses the name). */
  async resolve(hostname: string): Promise<LookupAddress[]> {
    const host = normalizeHostname(hostname);
    if (isIP(host) !== 0) {
      this.checkHost(host);
      return [{ address: host, family: isIP(host) }];
    }
    const addresses = await this.#resolve(host);
    if (addresses.length === 0) throw new Error(`${host} did not resolve to any address`);
    if (this.#allowedHost(host)) return [...addresses];
    for (const { address } of addresses) {
      const reason = internalAddressReason(address);
      if (reason !== undefined) {
        throw new SsrfBlockedError(`${host} resolves to ${address}, a ${reason} address`);
      }
    }
    return [...addresses];
  }

  /**
   * A `lookup` for Node's `http.request`: the client connects only to addresses returned here, and only
   * checked addresses are returned, so the address connected to is the one checked.
   */
  readonly lookup = (
    hostname: string,
    options: { all?: boolean; family?: number | string } | number | undefined,
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ): void => {
    const all = typeof options === "object" && options?.all === true;
    const wanted = typeof options === "object" ? Number(options?.family ?? 0) : Number(options ?? 0);
    this.resolve(hostname).then(
      (addresses) => {
        const usable =
          wanted === 4 || wanted === 6 ? addresses.filter((a) => a.family === wanted) : addresses;
        if (usable.length === 0) {
          callback(
            Object.assign(new Error(`${hostname}: no IPv${wanted} address`), { code: "ENOTFOUND" }),
            "",
          );
          return;
        }
        if (all) callback(null, usable);
        else callback(null, usable[0]?.address ?? "", usable[0]?.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, ""),
    );
  };
}
