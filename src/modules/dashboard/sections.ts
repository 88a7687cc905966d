import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import type { MessageKey } from '../../platform/web/i18n.ts'
import { chargebacksPages } from './chargebacks.pages.ts'
import { customersPages } from './customers.pages.ts'
import { developersPages } from './developers.pages.ts'
import { invoicesPages } from './invoices.pages.ts'
import { overviewPages } from './overview.pages.ts'
import { paymentLinksPages } from './payment-links.pages.ts'
import { paymentsPages } from './payments.pages.ts'
import { posPages } from './pos.pages.ts'
import { payoutsPages } from './payouts.pages.ts'
import { reportsPages } from './reports.pages.ts'
import { reviewsPages } from './reviews.pages.ts'
import { settingsPages } from './settings.pages.ts'
import { subscriptionsPages } from './subscriptions.pages.ts'

// THE list of the dashboard's sections: the navigation is drawn from it in this order, and
// each section's pages are registered from it. Adding a section = one entry here plus its
// `<name>.pages.ts` (see README.md).

export interface Section {
  id: string
  /** The navigation label (messages.ts, both languages). */
  label: MessageKey
  href: string
  pages: (deps: Deps) => FastifyPluginAsync
}

export const SECTIONS: readonly Section[] = [
  { id: 'overview', label: 'dash_nav_overview', href: '/dashboard', pages: overviewPages },
  { id: 'payments', label: 'dash_nav_payments', href: '/dashboard/payments', pages: paymentsPages },
  {
    id: 'customers',
    label: 'dash_nav_customers',
    href: '/dashboard/customers',
    pages: customersPages,
  },
  {
    id: 'subscriptions',
    label: 'dash_nav_subscriptions',
    href: '/dashboard/subscriptions',
    pages: subscriptionsPages,
  },
  { id: 'invoices', label: 'dash_nav_invoices', href: '/dashboard/invoices', pages: invoicesPages },
  {
    id: 'payment-links',
    label: 'dash_nav_payment_links',
    href: '/dashboard/payment-links',
    pages: paymentLinksPages,
  },
  {
    id: 'chargebacks',
    label: 'dash_nav_chargebacks',
    href: '/dashboard/chargebacks',
    pages: chargebacksPages,
  },
  { id: 'reviews', label: 'dash_nav_reviews', href: '/dashboard/reviews', pages: reviewsPages },
  { id: 'payouts', label: 'dash_nav_payouts', href: '/dashboard/payouts', pages: payoutsPages },
  { id: 'reports', label: 'dash_nav_reports', href: '/dashboard/reports', pages: reportsPages },
  {
    id: 'developers',
    label: 'dash_nav_developers',
    href: '/dashboard/developers',
    pages: developersPages,
  },
  { id: 'pos', label: 'dash_nav_pos', href: '/dashboard/pos', pages: posPages },
  { id: 'settings', label: 'dash_nav_settings', href: '/dashboard/settings', pages: settingsPages },
]
