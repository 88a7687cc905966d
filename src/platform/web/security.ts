// The security headers of every HTML page we serve (hosted buyer pages and the merchant
// dashboard): one CSP and one header set, so a page cannot forget one. The CSP allows
// nothing but our own origin: no inline script or style (`unsafe-inline` never appears),
// nothing from a CDN, no framing, forms post only to us.

export function contentSecurityPolicy(
  options: {
    formActionExtra?: string | null
    /** Origins that may frame the page (Kuruş.js's card fields and 3DS modal); none by default. */
    frameAncestors?: readonly string[]
  } = {},
): string {
  const extra = options.formActionExtra
  const ancestors = options.frameAncestors ?? []
  return [
    // default-src covers scripts and styles: 'self' only, no inline code.
    "default-src 'self'",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    `frame-ancestors ${ancestors.length > 0 ? ancestors.join(' ') : "'none'"}`,
    // A form's redirect counts as a form submission in browsers: the ACS page of a direct API
    // charge redirects to the merchant's returnUrl, so that page alone names its origin.
    `form-action 'self'${extra ? ` ${extra}` : ''}`,
  ].join('; ')
}

/** Headers for an HTML page; `live` adds HSTS (a sandbox may run on plain http). */
export function pageSecurityHeaders(options: { live: boolean }): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    // Page URLs may carry a bearer (invoice hash, session id): never sent on as a Referer.
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
    ...(options.live ? { 'strict-transport-security': 'max-age=63072000; includeSubDomains' } : {}),
  }
}
