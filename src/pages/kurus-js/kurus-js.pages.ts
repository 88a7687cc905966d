import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Lang } from '../../platform/web/i18n.ts'

// Kuruş.js's files and its card fields page (docs/kurus-js.md). Plain files read once: no
// build step, no inline script or style (the page's CSP allows neither).

const FILES = ['kurus.js', 'fields.js', 'fields.css'] as const
const contents = new Map<string, string>(
  FILES.map((f) => [f, readFileSync(join(import.meta.dirname, f), 'utf8')]),
)

export function kurusJsAsset(file: (typeof FILES)[number]): string {
  return contents.get(file) ?? ''
}

const TEXT = {
  tr: {
    title: 'Kart bilgileri',
    number: 'Kart numarası',
    expiry: 'Son kullanma (AA/YY)',
    cvc: 'CVC',
    name: 'Kart üzerindeki isim',
    unavailable: 'Kart alanları bu sayfada kullanılamıyor.',
  },
  en: {
    title: 'Card details',
    number: 'Card number',
    expiry: 'Expiry (MM/YY)',
    cvc: 'CVC',
    name: 'Name on card',
    unavailable: 'Card fields are not available on this page.',
  },
} as const

/** The four card inputs, posted by fields.js to POST /v1/public/tokens on this origin. */
export function cardFieldsPage(lang: Lang): string {
  const t = TEXT[lang]
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t.title}</title>
<link rel="stylesheet" href="/js/v1/fields.css">
</head>
<body>
<form id="kurus-fields" autocomplete="on" novalidate>
<label>${t.number}<input name="number" inputmode="numeric" autocomplete="cc-number" maxlength="23" required></label>
<div class="row">
<label>${t.expiry}<input name="expiry" inputmode="numeric" autocomplete="cc-exp" maxlength="5" placeholder="12/30" required></label>
<label>${t.cvc}<input name="cvc" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required></label>
</div>
<label>${t.name}<input name="name" autocomplete="cc-name" maxlength="200" required></label>
<p id="kurus-error" class="error" role="alert"></p>
</form>
<script src="/js/v1/fields.js"></script>
</body>
</html>`
}

export function fieldsUnavailablePage(lang: Lang): string {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>${TEXT[lang].title}</title></head><body><p>${TEXT[lang].unavailable}</p></body></html>`
}
