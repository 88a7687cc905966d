import assert from 'node:assert/strict'
import { Secret, TOTP } from 'otpauth'
import type { TestApp, TestMerchant } from '../helpers/app.ts'
import { charge, CARDS } from '../helpers/payments.ts'

// A small browser for the dashboard's web pages over real HTTP: a cookie jar, forms posted
// urlencoded with the page's CSRF token, redirects visible (not followed) so tests can see
// where a request was sent.

export interface Page {
  status: number
  text: string
  location: string | undefined
  setCookies: string[]
}

export class WebClient {
  readonly cookies = new Map<string, string>()
  lang: 'tr' | 'en' = 'tr'
  readonly baseUrl: string
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  private remember(setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair = '', ...attrs] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      const expired = attrs.some(
        (a) =>
          /^\s*max-age=0\s*$/i.test(a) ||
          (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now()),
      )
      if (expired || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  async request(method: string, path: string, body?: URLSearchParams): Promise<Page> {
    const response = await fetch(this.baseUrl + path, {
      method,
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        'accept-language': this.lang,
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(body ? { body: body.toString() } : {}),
    })
    const setCookies = response.headers.getSetCookie()
    this.remember(setCookies)
    return {
      status: response.status,
      text: await response.text(),
      location: response.headers.get('location') ?? undefined,
      setCookies,
    }
  }

  get(path: string): Promise<Page> {
    return this.request('GET', path)
  }

  /** Posts a form with the CSRF token of `fromPage` (the page the form is on). */
  async submit(
    path: string,
    fields: Record<string, string>,
    fromPage?: Page | string,
  ): Promise<Page> {
    const page = typeof fromPage === 'string' ? await this.get(fromPage) : fromPage
    const token = page ? csrfOf(page.text) : undefined
    return this.request(
      'POST',
      path,
      new URLSearchParams({ ...(token ? { _csrf: token } : {}), ...fields }),
    )
  }

  /** Signs in with a password; returns the redirect (not followed). */
  async signIn(email: string, password: string): Promise<Page> {
    return this.submit('/dashboard/login', { email, password }, '/dashboard/login')
  }
}

export function csrfOf(html: string): string | undefined {
  return /name="_csrf" value="([^"]+)"/.exec(html)?.[1]
}

/** The text of the element with this id (tags stripped, entities of ours undone). */
export function textOf(html: string, id: string): string | undefined {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</`).exec(html)
  return match?.[1]
    ?.replace(/<[^>]+>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim()
}

/** The text of a table (by its wrapper's id), tags stripped: what a reader sees in it. */
export function tableText(html: string, id: string): string {
  return blockText(html, id, 'table')
}

/** The text from the element with this id up to the first closing `tag` after it. */
export function blockText(html: string, id: string, tag: string): string {
  const start = html.indexOf(`id="${id}"`)
  if (start < 0) return ''
  const end = html.indexOf(`</${tag}>`, start)
  return html
    .slice(start, end < 0 ? undefined : end)
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim()
}

export function alertOf(html: string): string | undefined {
  return /role="alert"[^>]*>\s*<p>([\s\S]*?)<\/p>/.exec(html)?.[1]?.trim()
}

export function h1Count(html: string): number {
  return (html.match(/<h1[\s>]/g) ?? []).length
}

export interface DashboardMerchant extends TestMerchant {
  email: string
  password: string
}

/** A merchant made through the operator API, with the dashboard login it returns. */
export async function newDashboardMerchant(
  h: TestApp,
  name = 'Anadolu Kitap',
): Promise<DashboardMerchant> {
  const created = await h.operator<{
    merchantId: string
    storeId: string
    apiKeyId: string
    publicKey: string
    secretKey: string
    dashboard: { email: string; password: string }
  }>('POST', '/operator/v1/merchants', { name, kycStatus: 'approved' })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const { dashboard, ...keys } = created.body
  return { ...keys, ...dashboard, client: h.clientFor(keys) }
}

export async function signedIn(h: TestApp, m: { email: string; password: string }) {
  const web = new WebClient(h.url)
  const res = await web.signIn(m.email, m.password)
  assert.equal(res.status, 303, res.text.slice(0, 400))
  assert.equal(res.location, '/dashboard')
  return web
}

/** A captured (or, with capture: false, authorized) card payment made through the API. */
export async function paidPayment(
  m: TestMerchant,
  amount: number,
  options: { capture?: boolean; card?: string; customerId?: string } = {},
) {
  const { res, transactionId } = await charge(
    m.client,
    options.card ?? CARDS.frictionless,
    amount,
    {
      threeDSecure: false,
      ...(options.capture === false ? { capture: false } : {}),
      ...(options.customerId ? { customerId: options.customerId } : {}),
    },
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { paymentId: res.body.paymentId, transactionId }
}

export async function apiPayment(m: TestMerchant, paymentId: string) {
  const res = await m.client.request<Record<string, unknown>>('GET', `/v1/payments/${paymentId}`)
  assert.equal(res.status, 200)
  return res.body
}

/** The current TOTP code for a base32 secret at the app's clock (plus `stepOffset` steps). */
export function totpCode(h: TestApp, secretBase32: string, stepOffset = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secretBase32), digits: 6, period: 30 }).generate({
    timestamp: h.clock.now().getTime() + stepOffset * 30_000,
  })
}
