/**
 * KURUS_TRUST_PROXY (config.trustProxy) as Fastify's `trustProxy` option: the socket's address
 * is the client unless it is a proxy named here, whose X-Forwarded-For entry then counts
 * (right to left, stopping at the first untrusted hop: a client prepending addresses of its
 * own choosing changes nothing). A hop count trusts that many proxies nearest the server.
 */
export function trustProxyOption(
  trust: false | number | readonly string[],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false
  if (typeof trust === 'number') return (_address, hop) => hop < trust
  return [...trust]
}
