import { en as platformEn, tr as platformTr } from './messages.ts'

// The one catalogue of every page's words. Platform has its own table (messages.ts); each
// module and the hosted pages keep theirs in a <name>.messages.ts, which adds its Turkish
// table's type to MessageTables (declaration merging, so platform imports no module) and is
// handed to useMessages by app.ts, the way database.ts composes the modules' tables. A key
// is checked at compile time against all the tables.

/** One table per owner: `typeof tr` of its Turkish table (its keys are the owner's words). */
export interface MessageTables {
  platform: typeof platformTr
}

export type MessageKey = {
  [Owner in keyof MessageTables]: keyof MessageTables[Owner] & string
}[keyof MessageTables]

/** A table of words in both languages, as a <name>.messages.ts exports it. */
export interface MessageTable {
  tr: Readonly<Record<string, string>>
  en: Readonly<Record<string, string>>
}

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

const MESSAGES: Record<Lang, Record<string, string>> = {
  tr: { ...platformTr },
  en: { ...platformEn },
}
const ADDED = new Set<MessageTable>()

/**
 * Adds the tables to the catalogue (app.ts, before any page renders). Adding a table again
 * does nothing (every test app is built in the same process); a key owned by two tables is a
 * mistake, refused at start.
 */
export function useMessages(tables: readonly MessageTable[]): void {
  for (const table of tables) {
    if (ADDED.has(table)) continue
    for (const key of Object.keys(table.tr)) {
      if (Object.hasOwn(MESSAGES.tr, key)) throw new Error(`message ${key} has two tables`)
    }
    Object.assign(MESSAGES.tr, table.tr)
    Object.assign(MESSAGES.en, table.en)
    ADDED.add(table)
  }
}

function message(lang: Lang, key: MessageKey): string {
  const text = MESSAGES[lang][key]
  if (text === undefined) throw new Error(`message ${key} is in no table app.ts added`)
  return text
}

export function t(lang: Lang, key: MessageKey, vars: Record<string, string | number> = {}) {
  return message(lang, key).replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in vars ? String(vars[name]) : whole,
  )
}

/**
 * `t` for one owner's words by their prefix: `wordsWith('inv_')(lang, 'title')` is
 * `t(lang, 'inv_title')`, and only keys of that prefix are accepted.
 */
export function wordsWith<P extends string>(prefix: P) {
  return (lang: Lang, key: KeysAfter<P>, vars: Record<string, string | number> = {}): string =>
    t(lang, `${prefix}${key}` as MessageKey, vars)
}

/** The messages the browser script needs, in one language. */
export function clientMessages(lang: Lang, keys: readonly MessageKey[]): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [k, message(lang, k)]))
}

/** Is this string a key of the catalogue? (Words looked up by a code read from the database.) */
export function isMessageKey(key: string): key is MessageKey {
  return Object.hasOwn(MESSAGES.tr, key)
}
