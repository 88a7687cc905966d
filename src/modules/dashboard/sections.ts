import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import type { MessageKey } from '../../platform/web/i18n.ts'
import { developersPages } from './developers.pages.ts'
import { overviewPages } from './overview.pages.ts'
import { paymentLinksPages } from './payment-links.pages.ts'
import { paymentsPages } from './payments.pages.ts'
import { placeholderPages } from './placeholder.pages.ts'
import { settingsPages } from './settings.pages.ts'

// THE list of the dashboard's sections: the navigation is drawn from it in this order, and
// each section's pages are registered from it. Adding a section = one entry here plus its
// `<name>.pages.ts` (see README.md). Sections whose pages are not built yet show a page that
// says so (placeholder.pages.ts), so the navigation is complete from the start.

export interface Section {
  id: string
  /** The navigation label (messages.ts, both languages). */
  label: MessageKey
  href: string
  pages: (deps: Deps) => FastifyPluginAsync
}

function soon(id: string, label: MessageKey, path: string): Section {
  return { id, label, href: `/dashboard/${path}`, pages: placeholderPages(id, label, `/${path}`) }
}

export const SECTIONS: readonly Section[] = [
  { id: 'overview', label: 'dash_nav_overview', href: '/dashboard', pages: overviewPages },
  { id: 'payments', label: 'dash_nav_payments', href: '/dashboard/payments', pages: paymentsPages },
  soon('customers', 'dash_nav_customers', 'customers'),
  soon('subscriptions', 'dash_nav_subscriptions', 'subscriptions'),
  soon('invoices', 'dash_nav_invoices', 'invoices'),
  {
    id: 'payment-links',
    label: 'dash_nav_payment_links',
    href: '/dashboard/payment-links',
    pages: paymentLinksPages,
  },
  soon('chargebacks', 'dash_nav_chargebacks', 'chargebacks'),
  soon('reviews', 'dash_nav_reviews', 'reviews'),
  soon('payouts', 'dash_nav_payouts', 'payouts'),
  soon('reports', 'dash_nav_reports', 'reports'),
  {
    id: 'developers',
    label: 'dash_nav_developers',
    href: '/dashboard/developers',
    pages: developersPages,
  },
  { id: 'settings', label: 'dash_nav_settings', href: '/dashboard/settings', pages: settingsPages },
]
