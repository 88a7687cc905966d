import type { FastifyRequest } from 'fastify'
import { pager } from '../../platform/web/components.ts'
import type { SafeHtml } from '../../platform/web/html.ts'
import type { Lang } from '../../platform/web/i18n.ts'

// What the list-and-detail sections (customers, subscriptions, invoices, chargebacks, payouts)
// share: the `{id}` of a detail URL (cut to a sane length; the service decides whether it is
// the merchant's) and keyset pagination links that keep the list's filters.

/** The `:id` route parameter, at most 64 characters. */
export function idParam(request: FastifyRequest, name = 'id'): string {
  const value = (request.params as Record<string, unknown>)[name]
  return typeof value === 'string' ? value.slice(0, 64) : ''
}

/** `path` with these query parameters (empty ones left out). */
export function hrefWith(path: string, params: Readonly<Record<string, string | undefined>>) {
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v) search.set(k, v)
  const text = search.toString()
  return text ? `${path}?${text}` : path
}

/** "First page" (when not on it) and "Next page" (when there is one), filters kept. */
export function keysetPager(
  lang: Lang,
  path: string,
  filters: Readonly<Record<string, string | undefined>>,
  cursor: string | undefined,
  nextCursor: string | null,
): SafeHtml {
  return pager({
    lang,
    ...(cursor ? { firstHref: hrefWith(path, filters) } : {}),
    ...(nextCursor ? { nextHref: hrefWith(path, { ...filters, after: nextCursor }) } : {}),
  })
}
