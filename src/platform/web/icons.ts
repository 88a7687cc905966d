import { raw } from './html.ts'

// The drawn marks every page may use: our own SVG, no third-party images (the CSP allows
// only our origin).

export const icons = {
  lock: raw(
    '<svg class="icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path fill="currentColor" d="M10 1.5a4.5 4.5 0 0 0-4.5 4.5v2H5a2 2 0 0 0-2 2v6.5a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V10a2 2 0 0 0-2-2h-.5V6A4.5 4.5 0 0 0 10 1.5Zm-2.5 4.5a2.5 2.5 0 0 1 5 0v2h-5V6Zm2.5 5.25a1.25 1.25 0 0 1 .75 2.25v1.25a.75.75 0 0 1-1.5 0V13.5a1.25 1.25 0 0 1 .75-2.25Z"/></svg>',
  ),
  shield: raw(
    '<svg class="icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path fill="currentColor" d="M10 1 3 3.75v5.5c0 4.2 2.9 8.1 7 9.25 4.1-1.15 7-5.05 7-9.25v-5.5L10 1Zm3.53 6.72-4.25 4.5a.75.75 0 0 1-1.08.02l-2-2a.75.75 0 1 1 1.06-1.06l1.45 1.45 3.73-3.95a.75.75 0 0 1 1.09 1.04Z"/></svg>',
  ),
  check: raw(
    '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="none" stroke="currentColor" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round" d="m5 12.5 4.5 4.5L19 7.5"/></svg>',
  ),
  cross: raw(
    '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="none" stroke="currentColor" stroke-width="2.5" stroke-linecap="round" d="m7 7 10 10M17 7 7 17"/></svg>',
  ),
  clock: raw(
    '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="8.5" fill="none" stroke="currentColor" stroke-width="2"/><path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" d="M12 7.5V12l3 2"/></svg>',
  ),
  alert: raw(
    '<svg class="icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path fill="currentColor" d="M10 1.75a8.25 8.25 0 1 0 0 16.5 8.25 8.25 0 0 0 0-16.5Zm0 4a.9.9 0 0 1 .9.9v4.1a.9.9 0 0 1-1.8 0v-4.1a.9.9 0 0 1 .9-.9Zm0 8.9a1.1 1.1 0 1 1 0-2.2 1.1 1.1 0 0 1 0 2.2Z"/></svg>',
  ),
  card: raw(
    '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><rect x="2.5" y="5" width="19" height="14" rx="2.5" fill="none" stroke="currentColor" stroke-width="1.8"/><path stroke="currentColor" stroke-width="1.8" d="M2.5 9.5h19"/><path stroke="currentColor" stroke-width="1.8" stroke-linecap="round" d="M6 15h4"/></svg>',
  ),
  logo: raw(
    '<svg class="logo-mark" viewBox="0 0 32 32" aria-hidden="true" focusable="false"><rect width="32" height="32" rx="9" fill="#4338ca"/><path fill="#fff" d="M10 8h3.2v6.6L19.1 8H23l-6.3 7 6.7 9H19.5l-4.9-6.8-1.4 1.5V24H10z"/></svg>',
  ),
} as const

/** Card scheme marks, drawn by us (no third-party images). */
export const brandMarks = raw(
  [
    '<svg class="brand-mark" data-brand="visa" viewBox="0 0 48 30" aria-hidden="true" focusable="false" hidden><rect width="48" height="30" rx="4" fill="#1a1f71"/><text x="24" y="20" text-anchor="middle" font-family="Arial, sans-serif" font-size="13" font-style="italic" font-weight="700" fill="#fff">VISA</text></svg>',
    '<svg class="brand-mark" data-brand="mastercard" viewBox="0 0 48 30" aria-hidden="true" focusable="false" hidden><rect width="48" height="30" rx="4" fill="#252525"/><circle cx="19.5" cy="15" r="8" fill="#eb001b"/><circle cx="28.5" cy="15" r="8" fill="#f79e1b" fill-opacity=".9"/></svg>',
    '<svg class="brand-mark" data-brand="troy" viewBox="0 0 48 30" aria-hidden="true" focusable="false" hidden><rect width="48" height="30" rx="4" fill="#00a3e0"/><text x="24" y="19.5" text-anchor="middle" font-family="Arial, sans-serif" font-size="12" font-weight="700" fill="#fff">troy</text></svg>',
    '<svg class="brand-mark" data-brand="amex" viewBox="0 0 48 30" aria-hidden="true" focusable="false" hidden><rect width="48" height="30" rx="4" fill="#2e77bc"/><text x="24" y="19" text-anchor="middle" font-family="Arial, sans-serif" font-size="10" font-weight="700" fill="#fff">AMEX</text></svg>',
  ].join(''),
)

/** The same marks, all shown: the schemes the page accepts. */
export const acceptedBrands = raw(brandMarks.value.replaceAll(' hidden>', '>'))
