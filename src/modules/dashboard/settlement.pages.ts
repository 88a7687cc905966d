import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../database.ts'
import { validationError, type AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  field,
  section,
  selectField,
  type BadgeTone,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import type { Lang } from '../../platform/web/i18n.ts'
import {
  getBankAccount,
  getSchedule,
  listPayouts,
  payoutReport,
  putBankAccount,
  putSchedule,
  upcomingSettlement,
  type BankAccount,
  type PayoutSchedule,
  type PayoutStatus,
} from '../payouts/index.ts'
import {
  BASE,
  allow,
  attempt,
  permitted,
  auditedAction,
  csrfToken,
  redirect,
  refusalText,
  renderPage,
  type PageContext,
} from './dashboard.web.ts'
import { BankAccountBody, PayoutScheduleBody } from '../payouts/index.ts'
import { pageInput, pageRoute } from './page-rules.ts'
import { formFields, liraInput, parseLira, queryFields } from './forms.ts'
import { idParam, keysetPager } from './list-pages.ts'

// Settlement to the merchant's own bank account (issue 40), the dashboard's "Hakedişler":
// /dashboard/payouts/settlement — the upcoming payout (date, amount, rail, or why none) and
// the past settlement payouts; /dashboard/payouts/settlement/{id} — one payout explained:
// the balance summary per type (sales, refunds, fees, chargebacks…) and every line;
// /dashboard/settings/bank-account — the bank account (owner or finance) and the payout
// schedule (payouts.manage). All through the payouts module's services, as the API.
// The page's words live here (both languages) so the shared catalogue stays untouched.

const WORDS = {
  tr: {
    title: 'Hakedişler (banka hesabınıza)',
    upcoming: 'Yaklaşan hakediş',
    past: 'Geçmiş hakedişler',
    nextDate: 'Ödeme günü',
    amountNow: 'Şu anki tutar',
    rail: 'Kanal',
    account: 'Banka hesabı',
    holder: 'Hesap sahibi',
    available: 'Kullanılabilir bakiye',
    heldUntil: 'Hesap değişikliği beklemesi',
    noAccount: 'Banka hesabı yok: bakiye birikir.',
    setAccount: 'Banka hesabını ayarla',
    manual: 'Elle ödeme seçili: otomatik hakediş yapılmaz.',
    negative: 'Bakiye eksi (ödeme sonrası ters ibraz): sonraki hakedişlerden düşülür, ödenmez.',
    nothing: 'Ödenecek bakiye yok.',
    belowMinimum: 'Bakiye en düşük tutarın altında.',
    created: 'Oluşturma',
    runDate: 'Hakediş günü',
    arrival: 'Hesaba geçiş',
    amount: 'Tutar',
    status: 'Durum',
    open: 'Aç',
    none: 'Henüz hakediş yok.',
    summary: 'Bakiye özeti',
    lines: 'Satır satır',
    type: 'Tür',
    count: 'Adet',
    gross: 'Brüt',
    fee: 'Komisyon',
    net: 'Net',
    settled: 'Bu hakedişte',
    source: 'Kaynak',
    date: 'Tarih',
    total: 'Toplam',
    back: 'Hakedişlere dön',
    settings: 'Banka hesabı ve ödeme takvimi',
    iban: 'IBAN',
    save: 'Kaydet',
    saved: 'Kaydedildi.',
    scheduleTitle: 'Ödeme takvimi',
    interval: 'Sıklık',
    anchor: 'Gün (haftalık: monday…sunday, aylık: 1–31)',
    minimum: 'En düşük tutar (TL)',
    notAllowed: 'Banka hesabını yalnızca hesap sahibi (owner) veya finans rolü değiştirebilir.',
    mailNote:
      'Değişiklik hesap sahiplerine e-postayla bildirilir; canlı ortamda hakedişler 24 saat bekler.',
    daily: 'Günlük',
    weekly: 'Haftalık',
    monthly: 'Aylık',
    manualOpt: 'Elle',
    badAmount: 'minimumMinor: geçerli bir tutar girin',
    charge: 'Satış',
    refund: 'İade',
    chargeback: 'Ters ibraz',
    chargeback_reversal: 'Ters ibraz iadesi',
    payout: 'Ödeme',
    payout_failure: 'Başarısız ödeme iadesi',
    adjustment: 'Düzeltme',
    pending: 'Bekliyor',
    processing: 'İşleniyor',
    paid: 'Ödendi',
    failed: 'Başarısız',
  },
  en: {
    title: 'Payouts to your bank account',
    upcoming: 'Upcoming payout',
    past: 'Past payouts',
    nextDate: 'Payout date',
    amountNow: 'Amount now',
    rail: 'Rail',
    account: 'Bank account',
    holder: 'Account holder',
    available: 'Available balance',
    heldUntil: 'Held after an account change until',
    noAccount: 'No bank account: the balance accrues.',
    setAccount: 'Set the bank account',
    manual: 'Manual schedule: no automatic payouts.',
    negative:
      'Negative balance (a chargeback after a payout): netted from the next payouts, never paid.',
    nothing: 'Nothing to pay out.',
    belowMinimum: 'The balance is below the minimum.',
    created: 'Created',
    runDate: 'Run date',
    arrival: 'Arrives',
    amount: 'Amount',
    status: 'Status',
    open: 'Open',
    none: 'No payouts yet.',
    summary: 'Balance summary',
    lines: 'Line by line',
    type: 'Type',
    count: 'Count',
    gross: 'Gross',
    fee: 'Fee',
    net: 'Net',
    settled: 'In this payout',
    source: 'Source',
    date: 'Date',
    total: 'Total',
    back: 'Back to payouts',
    settings: 'Bank account and payout schedule',
    iban: 'IBAN',
    save: 'Save',
    saved: 'Saved.',
    scheduleTitle: 'Payout schedule',
    interval: 'Interval',
    anchor: 'Day (weekly: monday…sunday, monthly: 1–31)',
    minimum: 'Minimum amount (TRY)',
    notAllowed: 'Only an owner or a finance member may change the bank account.',
    mailNote: 'A change is emailed to the owners; in live, payouts wait 24 hours.',
    daily: 'Daily',
    weekly: 'Weekly',
    monthly: 'Monthly',
    manualOpt: 'Manual',
    badAmount: 'minimumMinor: enter a valid amount',
    charge: 'Sale',
    refund: 'Refund',
    chargeback: 'Chargeback',
    chargeback_reversal: 'Chargeback reversed',
    payout: 'Payout',
    payout_failure: 'Failed payout returned',
    adjustment: 'Adjustment',
    pending: 'Pending',
    processing: 'Processing',
    paid: 'Paid',
    failed: 'Failed',
  },
} as const
type Word = keyof (typeof WORDS)['tr']
const w = (lang: Lang, key: Word): string => WORDS[lang][key]

const TONES: Readonly<Record<PayoutStatus, BadgeTone>> = {
  pending: 'warning',
  processing: 'info',
  paid: 'success',
  failed: 'danger',
}
const PAGE_SIZE = 25

function typeLabel(lang: Lang, type: string): string {
  return type in WORDS[lang] ? w(lang, type as Word) : type
}

/** The list and the upcoming payout. */
async function settlementPage(deps: Deps, ctx: PageContext): Promise<unknown> {
  const { lang } = ctx
  const { merchantId } = ctx.member
  const cursor = queryFields(ctx.request).optional('after', 2048)
  const caller = { merchantId, submerchantId: null }
  const [upcoming, account, list] = await Promise.all([
    upcomingSettlement(deps, merchantId),
    attempt(() => getBankAccount(deps, merchantId)),
    attempt(() =>
      listPayouts(deps, caller, {
        kind: 'settlement',
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      }),
    ),
  ])
  const money = (m: number) => formatMoney(m, lang)
  const blockedText: Record<NonNullable<typeof upcoming.blocked>, string> = {
    no_bank_account: w(lang, 'noAccount'),
    manual: w(lang, 'manual'),
    negative: w(lang, 'negative'),
    nothing: w(lang, 'nothing'),
    below_minimum: w(lang, 'belowMinimum'),
  }
  const { items, nextCursor } = list.ok ? list.value : { items: [], nextCursor: null }
  return renderPage(ctx, {
    heading: w(lang, 'title'),
    section: 'payouts',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/settings/bank-account">${w(lang, 'settings')}</a>`,
    ...(list.ok
      ? {}
      : {
          status: list.error.status,
          flash: { kind: 'error', text: refusalText(lang, list.error) },
        }),
    content: markup`
      ${section({
        title: w(lang, 'upcoming'),
        id: 'upcoming-heading',
        body: markup`${facts([
          [w(lang, 'nextDate'), markup`<span id="upcoming-date">${upcoming.runDate ?? '—'}</span>`],
          [
            w(lang, 'amountNow'),
            markup`<span id="upcoming-amount">${upcoming.blocked === null ? money(upcoming.amountMinor) : '—'}</span>`,
          ],
          [w(lang, 'rail'), upcoming.blocked === null ? upcoming.rail.toUpperCase() : '—'],
          [
            w(lang, 'available'),
            markup`<span id="available-balance" class="${upcoming.availableMinor < 0 ? 'negative' : ''}">${money(upcoming.availableMinor)}</span>`,
          ],
          [
            w(lang, 'account'),
            account.ok
              ? markup`<span class="mono" id="bank-account">${account.value.ibanMasked}</span> · ${account.value.holderName}`
              : markup`<a href="${BASE}/settings/bank-account">${w(lang, 'setAccount')}</a>`,
          ],
          ...(upcoming.heldUntil
            ? [[w(lang, 'heldUntil'), formatDate(upcoming.heldUntil, lang, 'datetime')] as const]
            : []),
        ])}
        ${upcoming.blocked ? markup`<p class="muted" id="upcoming-note">${blockedText[upcoming.blocked]}</p>` : ''}`,
      })}
      ${section({
        title: w(lang, 'past'),
        id: 'past-heading',
        body: markup`${dataTable({
          caption: w(lang, 'past'),
          id: 'settlement-table',
          columns: [
            { label: w(lang, 'created') },
            { label: w(lang, 'arrival') },
            { label: w(lang, 'amount'), numeric: true },
            { label: w(lang, 'rail') },
            { label: w(lang, 'account') },
            { label: w(lang, 'status') },
            { label: '' },
          ],
          rows: items.map((p) => [
            formatDate(p.createdAt, lang, 'datetime'),
            p.arrivalDate ?? '—',
            money(p.amountMinor),
            p.rail.toUpperCase(),
            markup`<span class="mono">•••• ${p.bankAccountLast4 ?? ''}</span>`,
            badge(w(lang, p.status), TONES[p.status]),
            markup`<a href="${BASE}/payouts/settlement/${p.id}">${w(lang, 'open')}</a>`,
          ]),
          empty: w(lang, 'none'),
        })}
        ${keysetPager(lang, `${BASE}/payouts/settlement`, {}, cursor, nextCursor)}`,
      })}`,
  })
}

/** One settlement payout explained: the summary per type and every line. */
async function settlementPayoutPage(deps: Deps, ctx: PageContext, id: string): Promise<unknown> {
  const { lang } = ctx
  const { merchantId } = ctx.member
  // Another merchant's (or no) payout is the service's 404: the 404 page.
  const report = await payoutReport(deps, { merchantId, submerchantId: null }, id)
  const p = report.payout
  const money = (m: number) => formatMoney(m, lang)
  return renderPage(ctx, {
    heading: `${w(lang, 'title')} · ${money(p.amountMinor)}`,
    section: 'payouts',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/payouts/settlement">${w(lang, 'back')}</a>`,
    content: markup`
      ${section({
        title: p.id,
        id: 'payout-heading',
        body: facts([
          [w(lang, 'amount'), markup`<span id="payout-amount">${money(p.amountMinor)}</span>`],
          [
            w(lang, 'status'),
            markup`<span id="payout-status">${badge(w(lang, p.status), TONES[p.status])}</span>`,
          ],
          [w(lang, 'created'), formatDate(p.createdAt, lang, 'datetime')],
          [w(lang, 'arrival'), p.arrivalDate ?? '—'],
          [w(lang, 'rail'), p.rail.toUpperCase()],
          [w(lang, 'account'), markup`<span class="mono">${p.destMasked}</span>`],
          [w(lang, 'holder'), p.holderName],
        ]),
      })}
      ${section({
        title: w(lang, 'summary'),
        id: 'summary-heading',
        body: dataTable({
          caption: w(lang, 'summary'),
          id: 'summary-table',
          columns: [
            { label: w(lang, 'type') },
            { label: w(lang, 'count'), numeric: true },
            { label: w(lang, 'gross'), numeric: true },
            { label: w(lang, 'fee'), numeric: true },
            { label: w(lang, 'settled'), numeric: true },
          ],
          rows: [
            ...report.summary.map((s) => [
              typeLabel(lang, s.type),
              String(s.count),
              money(s.amountMinor),
              money(s.feeMinor),
              money(s.settledMinor),
            ]),
            [
              markup`<strong>${w(lang, 'total')}</strong>`,
              '',
              '',
              '',
              markup`<strong id="summary-total">${money(report.totalSettledMinor)}</strong>`,
            ],
          ],
          empty: w(lang, 'none'),
        }),
      })}
      ${section({
        title: w(lang, 'lines'),
        id: 'lines-heading',
        body: dataTable({
          caption: w(lang, 'lines'),
          id: 'lines-table',
          columns: [
            { label: w(lang, 'date') },
            { label: w(lang, 'type') },
            { label: w(lang, 'source') },
            { label: w(lang, 'gross'), numeric: true },
            { label: w(lang, 'fee'), numeric: true },
            { label: w(lang, 'net'), numeric: true },
            { label: w(lang, 'settled'), numeric: true },
          ],
          rows: report.lines.map((l) => [
            formatDate(l.createdAt, lang, 'datetime'),
            typeLabel(lang, l.type),
            l.type === 'charge'
              ? markup`<a class="mono" href="${BASE}/payments/${l.sourceId}">${l.sourceId}</a>`
              : markup`<span class="mono">${l.sourceId}</span>`,
            money(l.amountMinor),
            money(l.feeMinor),
            money(l.netMinor),
            money(l.settledMinor),
          ]),
          empty: w(lang, 'none'),
        }),
      })}`,
  })
}

/** The field's error for a form field (the service's 400 names the field). */
function errorOf(error: AppError | undefined, name: string): { error?: string } {
  return error?.details?.some((d) => d.field === name) ? { error: error.message } : {}
}

interface SettingsInput {
  iban?: string
  holderName?: string
  interval?: string
  anchor?: string
  minimum?: string
}

function scheduleForm(
  lang: Lang,
  csrf: string,
  s: PayoutSchedule,
  input: SettingsInput,
  error: AppError | undefined,
): SafeHtml {
  const fieldError = (name: string) =>
    error?.details?.some((d) => d.field === name) ? error.message : undefined
  const minimumError = fieldError('minimumMinor')
  return markup`<form method="post" action="${BASE}/settings/payout-schedule" class="form-stack" id="schedule-form">
    ${csrfInput(csrf)}
    ${selectField({
      name: 'interval',
      label: w(lang, 'interval'),
      value: input.interval ?? s.interval,
      options: [
        { value: 'daily', label: w(lang, 'daily') },
        { value: 'weekly', label: w(lang, 'weekly') },
        { value: 'monthly', label: w(lang, 'monthly') },
        { value: 'manual', label: w(lang, 'manualOpt') },
      ],
    })}
    ${field({
      name: 'anchor',
      label: w(lang, 'anchor'),
      value: input.anchor ?? s.anchor ?? '',
      maxlength: 16,
      ...errorOf(error, 'anchor'),
    })}
    ${field({
      name: 'minimum',
      label: w(lang, 'minimum'),
      value: input.minimum ?? liraInput(s.minimumMinor, lang),
      inputmode: 'decimal',
      maxlength: 20,
      ...(minimumError ? { error: minimumError } : {}),
    })}
    <div class="actions"><button type="submit" class="button button-primary">${w(lang, 'save')}</button></div>
  </form>`
}

async function settingsPage(
  deps: Deps,
  ctx: PageContext,
  input: SettingsInput = {},
  error?: AppError,
): Promise<unknown> {
  const { lang } = ctx
  const { merchantId } = ctx.member
  const [account, schedule] = await Promise.all([
    attempt(() => getBankAccount(deps, merchantId)),
    getSchedule(deps, merchantId),
  ])
  const csrf = csrfToken(ctx.request, ctx.reply)
  const current: BankAccount | undefined = account.ok ? account.value : undefined
  const saved = queryFields(ctx.request).optional('saved', 16) !== undefined
  const bankForm = ctx.can('bank_account.manage')
    ? markup`<form method="post" action="${BASE}/settings/bank-account" class="form-stack" id="bank-account-form">
        ${csrfInput(csrf)}
        ${field({
          name: 'iban',
          label: w(lang, 'iban'),
          value: input.iban ?? '',
          maxlength: 64,
          autocomplete: 'off',
          required: true,
          ...errorOf(error, 'iban'),
        })}
        ${field({
          name: 'holderName',
          label: w(lang, 'holder'),
          value: input.holderName ?? current?.holderName ?? '',
          maxlength: 140,
          required: true,
          ...errorOf(error, 'holderName'),
        })}
        <p class="muted">${w(lang, 'mailNote')}</p>
        <div class="actions"><button type="submit" class="button button-primary">${w(lang, 'save')}</button></div>
      </form>`
    : markup`<p class="muted" id="bank-account-readonly">${w(lang, 'notAllowed')}</p>`
  return renderPage(ctx, {
    heading: w(lang, 'settings'),
    section: 'settings',
    ...(error
      ? { status: error.status, flash: { kind: 'error', text: refusalText(lang, error) } }
      : saved
        ? { flash: { kind: 'success', text: w(lang, 'saved') } }
        : {}),
    content: markup`
      ${section({
        title: w(lang, 'account'),
        id: 'bank-account-heading',
        body: markup`${facts([
          [
            w(lang, 'account'),
            markup`<span class="mono" id="bank-account">${current?.ibanMasked ?? '—'}</span>`,
          ],
          [w(lang, 'holder'), current?.holderName ?? '—'],
          ...(current?.payoutsHeldUntil
            ? [
                [
                  w(lang, 'heldUntil'),
                  formatDate(current.payoutsHeldUntil, lang, 'datetime'),
                ] as const,
              ]
            : []),
        ])}
        ${bankForm}`,
      })}
      ${section({
        title: w(lang, 'scheduleTitle'),
        id: 'schedule-heading',
        body: ctx.can('payouts.manage')
          ? scheduleForm(lang, csrf, schedule, input, error)
          : facts([[w(lang, 'interval'), schedule.interval]]),
      })}`,
  })
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  bankAccount: pageRoute({ permission: 'bank_account.manage', schema: BankAccountBody }),
  schedule: pageRoute({ permission: 'payouts.manage', schema: PayoutScheduleBody }),
}

/** Registered by payoutsPages (the "Hakedişler" section) under /dashboard. */
export function settlementRoutes(app: FastifyInstance, deps: Deps): void {
  app.get('/payouts/settlement', async (request, reply) =>
    settlementPage(deps, allow(deps, request, reply, 'read')),
  )
  app.get('/payouts/settlement/:id', async (request, reply) =>
    settlementPayoutPage(deps, allow(deps, request, reply, 'read'), idParam(request)),
  )
  app.get('/settings/bank-account', async (request, reply) =>
    settingsPage(deps, allow(deps, request, reply, 'read')),
  )
  app.post('/settings/bank-account', ROUTES.bankAccount, async (request, reply) => {
    const ctx = permitted(deps, request, reply)
    const { merchantId } = ctx.member
    const form = formFields(request)
    const input = { iban: form.text('iban', 64), holderName: form.text('holderName', 200) }
    const invalid = pageInput(request, input)
    if (invalid) return settingsPage(deps, ctx, input, invalid)
    const last4 = input.iban.replace(/\s/g, '').slice(-4)
    const result = await attempt(() =>
      auditedAction(ctx, 'bank_account.update', merchantId, { last4 }, () =>
        putBankAccount(deps, merchantId, input),
      ),
    )
    if (!result.ok) return settingsPage(deps, ctx, input, result.error)
    return redirect(reply, `${BASE}/settings/bank-account?saved=bank`)
  })
  app.post('/settings/payout-schedule', ROUTES.schedule, async (request, reply) => {
    const ctx = permitted(deps, request, reply)
    const { merchantId } = ctx.member
    const form = formFields(request)
    const input = {
      interval: form.text('interval', 16),
      anchor: form.text('anchor', 16).trim(),
      minimum: form.text('minimum', 20).trim(),
    }
    const result = await attempt(async () => {
      const minimumMinor = input.minimum === '' ? 0 : parseLira(input.minimum)
      if (minimumMinor === undefined) {
        throw validationError('minimumMinor', 'enter an amount in TRY')
      }
      const details = { interval: input.interval, minimumMinor }
      return auditedAction(ctx, 'payout_schedule.update', merchantId, details, () =>
        putSchedule(deps, merchantId, {
          interval: input.interval as PayoutSchedule['interval'],
          anchor: input.anchor === '' ? null : input.anchor,
          minimumMinor,
        }),
      )
    })
    if (!result.ok) return settingsPage(deps, ctx, input, result.error)
    return redirect(reply, `${BASE}/settings/bank-account?saved=schedule`)
  })
}
