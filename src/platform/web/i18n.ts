import { en, tr, type MessageKey } from './messages.ts'

export type { MessageKey }

/** The catalogue's keys that start with `P`, without it (a page's own words: `inv_…`). */
export type KeysAfter<P extends string, K = MessageKey> = K extends `${P}${infer Rest}`
  ? Rest
  : never

// Turkish and English for every page. The language comes from `?lang=` (which the
// page remembers in a cookie), else the cookie, else Accept-Language; Turkish by default.

export type Lang = 'tr' | 'en'
export const LANGS: readonly Lang[] = ['tr', 'en']
export const LANG_COOKIE = 'kurus_lang'

function asLang(value: string | undefined): Lang | undefined {
  const base = value?.trim().toLowerCase().slice(0, 2)
  return base === 'tr' || base === 'en' ? base : undefined
}

/** The best of tr/en for an Accept-Language header, honouring q-values. */
export function langFromAcceptLanguage(header: string | undefined): Lang | undefined {
  if (!header) return undefined
  const ranked = header
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';')
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean)
      return { lang: asLang(tag), q: q === undefined ? 1 : Number(q), index }
    })
    .filter((r) => r.lang !== undefined && r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
  return ranked[0]?.lang
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=')
    if (key === name) return rest.join('=')
  }
  return undefined
}

export function pickLang(p: {
  query: string | undefined
  cookie: string | undefined
  acceptLanguage: string | undefined
}): Lang {
  return (
    asLang(p.query) ??
    asLang(cookieValue(p.cookie, LANG_COOKIE)) ??
    langFromAcceptLanguage(p.acceptLanguage) ??
    'tr'
  )
}

const MESSAGES: Readonly<Record<Lang, Record<MessageKey, string>>> = { tr, en }

export function t(lang: Lang, key: MessageKey, vars: Record<string, string | number> = {}) {
  return MESSAGES[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in vars ? String(vars[name]) : whole,
  )
}

/** The messages the browser script needs, in one language. */
export function clientMessages(lang: Lang, keys: readonly MessageKey[]): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [k, MESSAGES[lang][k]]))
}

/** Is this string a key of the catalogue? (Words looked up by a code read from the database.) */
export function isMessageKey(key: string): key is MessageKey {
  return Object.hasOwn(tr, key)
}
