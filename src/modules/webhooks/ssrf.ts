import { lookup } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { KurusEnv } from '../../config.ts'

// SSRF guard for outgoing webhooks. A receiver URL is the merchant's to choose, so without a
// guard it could point our workers at the cloud metadata service or the private network.
// The URL is checked when an endpoint is created and again at every delivery, against the
// addresses DNS gives at that moment, and the connection goes to the address that was
// checked (a custom lookup), so a DNS answer that changes between check and connect
// (rebinding) cannot slip through. Redirects are never followed (sender.ts).
//
// Addresses are classified by ipaddr.js's special-purpose ranges (IANA registries) rather than
// a hand-kept blocklist, which had missed `::127.0.0.1`, `::ffff:0:7f00:1`, `64:ff9b:1::/48`
// and `fec0::/10`. In `live` only global unicast is allowed: every other range (loopback,
// private, CGNAT, unique- and site-local, NAT64, 6to4, Teredo, documentation, benchmarking…)
// is refused. An IPv6 address that carries an IPv4 one (IPv4-mapped or -compatible, SIIT,
// NAT64, 6to4, Teredo) is also judged by that IPv4 address, in every environment.

type Address = ipaddr.IPv4 | ipaddr.IPv6

/** Refused in every environment: nothing legitimate receives webhooks there. */
const ALWAYS_REFUSED = new Set(['unspecified', 'broadcast', 'multicast', 'linkLocal', 'reserved'])

export type AddressVerdict = { ok: true } | { ok: false; reason: string }

/** The address's range; `::a.b.c.d` (deprecated IPv4-compatible) gets a name of its own. */
function rangeOf(address: Address): string {
  const range = address.range()
  if (address.kind() === 'ipv6' && range === 'unicast') {
    const parts = (address as ipaddr.IPv6).parts
    if (parts.slice(0, 6).every((p) => p === 0)) return 'ipv4Compatible'
  }
  return range
}

function ipv4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
}

/** The IPv4 addresses an IPv6 address leads to, by the transition mechanism it belongs to. */
function embeddedIpv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4[] {
  const p = address.parts
  const at = (i: number) => p[i] ?? 0
  switch (range) {
    // ::ffff:a.b.c.d, ::ffff:0:a.b.c.d (SIIT), ::a.b.c.d, and NAT64 64:ff9b::/96 and the
    // local-use 64:ff9b:1::/48: the last 32 bits (with the /96 translator prefixes NAT64 is
    // deployed with).
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'ipv4Compatible':
    case 'rfc6052':
      return [ipv4From(at(6), at(7))]
    case '6to4': // 2002:aabb:ccdd::/48
      return [ipv4From(at(1), at(2))]
    case 'teredo': // 2001:0:<server>:<flags>:<port>:<client, inverted>
      return [ipv4From(at(2), at(3)), ipv4From(~at(6) & 0xffff, ~at(7) & 0xffff)]
    default:
      return []
  }
}

function judge(address: Address, env: KurusEnv): AddressVerdict {
  const range = rangeOf(address)
  if (ALWAYS_REFUSED.has(range)) return { ok: false, reason: 'resolves to a reserved address' }
  if (address.kind() === 'ipv6') {
    for (const inner of embeddedIpv4(address as ipaddr.IPv6, range)) {
      const verdict = judge(inner, env)
      if (!verdict.ok) return verdict
    }
  }
  // IPv4-mapped is how a dual-stack resolver may hand out a public IPv4 address: its IPv4
  // address was judged just above.
  if (env === 'live' && range !== 'unicast' && range !== 'ipv4Mapped') {
    return { ok: false, reason: `resolves to a loopback or private address (${range})` }
  }
  return { ok: true }
}

/** Is this resolved address a permitted webhook destination in `env`? */
export function checkAddress(address: string, env: KurusEnv): AddressVerdict {
  // node:net's strict syntax first: ipaddr.js would also take forms like `127.1` or `0x7f.1`.
  if (isIP(address) === 0) return { ok: false, reason: 'is not an IP address' }
  return judge(ipaddr.parse(address), env)
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string }

/** The URL's shape: http(s), a host, no fragment games. DNS is not consulted here. */
export function parseReceiverUrl(raw: string): UrlVerdict {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, reason: 'is not a valid URL' }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: 'must be an http or https URL' }
  }
  if (!url.hostname) return { ok: false, reason: 'has no host' }
  return { ok: true, url }
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
}

const DNS_TIMEOUT_MS = 5_000

export interface ResolvedAddress {
  address: string
  family: number
}

/** Every address a host name resolves to. Replaceable in tests (e.g. a rebinding resolver). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>

export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('DNS lookup timed out')), DNS_TIMEOUT_MS)
    lookup(host, { all: true }, (error, addresses) => {
      clearTimeout(timer)
      if (error) reject(error)
      else resolve(addresses)
    })
  })

/**
 * Checks a receiver URL as a whole: its shape, then every address its host resolves to
 * (an IP literal is its own answer). Every address must pass, or a round-robin answer could
 * smuggle in a private one. A name that does not resolve fails in `live`; in `demo` it is
 * let through, since a developer may register a receiver before it is up.
 */
export async function checkReceiverUrl(
  raw: string,
  env: KurusEnv,
  resolver: Resolver = systemResolver,
): Promise<AddressVerdict> {
  const parsed = parseReceiverUrl(raw)
  if (!parsed.ok) return parsed
  const host = hostOf(parsed.url)
  if (isIP(host) !== 0) return checkAddress(host, env)
  let addresses: ResolvedAddress[]
  try {
    addresses = await resolver(host)
  } catch {
    return env === 'live' ? { ok: false, reason: 'host does not resolve' } : { ok: true }
  }
  for (const { address } of addresses) {
    const verdict = checkAddress(address, env)
    if (!verdict.ok) return verdict
  }
  return { ok: true }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | ResolvedAddress[],
  family?: number,
) => void

/**
 * A `lookup` for http.request that resolves, refuses the whole answer if any address is
 * not allowed, and hands the socket only checked addresses: the connection goes where the
 * check looked, so a name that answered a public address at registration and a private one
 * now (DNS rebinding) is refused here, at connect time.
 */
export function guardedLookup(env: KurusEnv, resolver: Resolver = systemResolver) {
  return (
    hostname: string,
    options: { all?: boolean | undefined },
    callback: LookupCallback,
  ): void => {
    resolver(hostname).then(
      (addresses) => {
        for (const { address } of addresses) {
          const verdict = checkAddress(address, env)
          if (!verdict.ok) {
            const error: NodeJS.ErrnoException = new Error(`destination ${verdict.reason}`)
            error.code = 'EKURUSSSRF'
            callback(error, '')
            return
          }
        }
        const first = addresses[0]
        if (!first) {
          const error: NodeJS.ErrnoException = new Error('host does not resolve')
          error.code = 'ENOTFOUND'
          callback(error, '')
          return
        }
        if (options.all) callback(null, addresses)
        else callback(null, first.address, first.family)
      },
      (error: unknown) => {
        callback(error instanceof Error ? error : new Error(String(error)), '')
      },
    )
  }
}
