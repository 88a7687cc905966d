import { lookup } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import type { KurusEnv } from '../../config.ts'

// SSRF guard for outgoing webhooks. A receiver URL is the merchant's to choose, so without a
// guard it could point our workers at the cloud metadata service or the private network.
// The URL is checked when an endpoint is created and again at every delivery, against the
// addresses DNS gives at that moment, and the connection goes to the address that was
// checked (a custom lookup), so a DNS answer that changes between check and connect
// (rebinding) cannot slip through.

/** Refused in every environment: nothing legitimate receives webhooks there. */
const ALWAYS = new BlockList()
ALWAYS.addSubnet('0.0.0.0', 8, 'ipv4') // "this network"
ALWAYS.addSubnet('169.254.0.0', 16, 'ipv4') // link-local, incl. 169.254.169.254 metadata
ALWAYS.addSubnet('224.0.0.0', 4, 'ipv4') // multicast
ALWAYS.addSubnet('240.0.0.0', 4, 'ipv4') // reserved, incl. 255.255.255.255
ALWAYS.addAddress('::', 'ipv6') // unspecified
ALWAYS.addSubnet('fe80::', 10, 'ipv6') // link-local
ALWAYS.addSubnet('ff00::', 8, 'ipv6') // multicast

/** Refused in `live` only: `demo` lets a developer point webhooks at a local receiver. */
const PRIVATE = new BlockList()
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4') // loopback
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4')
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4')
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4')
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4') // carrier-grade NAT
PRIVATE.addSubnet('192.0.0.0', 24, 'ipv4') // IETF protocol assignments
PRIVATE.addSubnet('198.18.0.0', 15, 'ipv4') // benchmarking
PRIVATE.addAddress('::1', 'ipv6') // loopback
PRIVATE.addSubnet('fc00::', 7, 'ipv6') // unique local
PRIVATE.addSubnet('64:ff9b::', 96, 'ipv6') // NAT64: reaches IPv4 addresses, private ones too
PRIVATE.addSubnet('2002::', 16, 'ipv6') // 6to4: embeds an IPv4 address

export type AddressVerdict = { ok: true } | { ok: false; reason: string }

/** Is this resolved address a permitted webhook destination in `env`? */
export function checkAddress(address: string, env: KurusEnv): AddressVerdict {
  const family = isIP(address)
  if (family === 0) return { ok: false, reason: 'is not an IP address' }
  const type = family === 4 ? 'ipv4' : 'ipv6'
  // BlockList matches IPv4-mapped IPv6 (::ffff:a.b.c.d) against the IPv4 rules too.
  if (ALWAYS.check(address, type)) return { ok: false, reason: 'resolves to a reserved address' }
  if (env === 'live' && PRIVATE.check(address, type)) {
    return { ok: false, reason: 'resolves to a loopback or private address' }
  }
  return { ok: true }
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

function resolveAll(host: string): Promise<{ address: string; family: number }[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('DNS lookup timed out')), DNS_TIMEOUT_MS)
    lookup(host, { all: true }, (error, addresses) => {
      clearTimeout(timer)
      if (error) reject(error)
      else resolve(addresses)
    })
  })
}

/**
 * Checks a receiver URL as a whole: its shape, then every address its host resolves to
 * (an IP literal is its own answer). Every address must pass, or a round-robin answer could
 * smuggle in a private one. A name that does not resolve fails in `live`; in `demo` it is
 * let through, since a developer may register a receiver before it is up.
 */
export async function checkReceiverUrl(raw: string, env: KurusEnv): Promise<AddressVerdict> {
  const parsed = parseReceiverUrl(raw)
  if (!parsed.ok) return parsed
  const host = hostOf(parsed.url)
  if (isIP(host) !== 0) return checkAddress(host, env)
  let addresses: { address: string }[]
  try {
    addresses = await resolveAll(host)
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
  address: string | { address: string; family: number }[],
  family?: number,
) => void

/**
 * A `lookup` for http.request that resolves, refuses the whole answer if any address is
 * not allowed, and hands the socket only checked addresses: the connection goes where the
 * check looked.
 */
export function guardedLookup(env: KurusEnv) {
  return (
    hostname: string,
    options: { all?: boolean | undefined },
    callback: LookupCallback,
  ): void => {
    resolveAll(hostname).then(
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
