import type { AppError, FieldIssue } from '../../platform/errors.ts'
import { formatMoney, formatNumber } from '../../platform/web/format.ts'
import { t, type Lang, type MessageKey } from '../../platform/web/i18n.ts'

// A refused action in the reader's words. The services explain a refusal in English for the
// API's developers ("amount: must not exceed the refundableAmount of 10000", in kuruş); the
// dashboard's staff read Turkish and lira. So a page never shows the service's text: it shows
// a sentence for the kind of refusal, then each field issue it knows in the page's language
// (amounts as money), and for an issue it does not know only the field's name. The words a
// page made itself (already in the page's language) pass through.

const KIND_KEYS: Partial<Record<string, MessageKey>> = {
  'SVC-STATE-3401': 'dash_err_state',
  'SVC-VAL-3001': 'dash_err_invalid',
  'SVC-VAL-3003': 'dash_err_too_large',
  'SVC-KYC-3101': 'dash_err_kyc',
  'SVC-PAY-3501': 'dash_err_declined',
  'SVC-RES-3301': 'dash_err_not_found',
  'SVC-RES-3302': 'dash_err_conflict',
  'SVC-AUTH-3201': 'dash_err_forbidden',
  'SVC-GW-2001': 'dash_err_conflict',
  'SVC-GW-1004': 'dash_err_rate',
}

/** The fields the dashboard's forms send, by the name the services give them. */
const FIELD_KEYS: Partial<Record<string, MessageKey>> = {
  amount: 'dash_field_amount',
  password: 'dash_field_password',
  passwordConfirm: 'dash_field_password_confirm',
  currentPassword: 'dash_field_current_password',
  email: 'dash_field_email',
  buyerEmail: 'dash_field_email',
  from: 'dash_field_from',
  to: 'dash_field_to',
  dueDate: 'dash_field_due_date',
  expiresAt: 'dash_field_expires_at',
  value: 'dash_field_value',
  note: 'dash_field_note',
  csv: 'dash_field_csv',
  rows: 'dash_field_csv',
  file: 'dash_field_file',
  fileIds: 'dash_field_file',
  body: 'dash_field_file',
  metadata: 'dash_field_metadata',
  lineItems: 'dash_field_line_items',
  condition: 'dash_field_condition',
  description: 'dash_field_description',
  url: 'dash_field_url',
  name: 'dash_field_name',
  maxPayments: 'dash_field_max_payments',
  phone: 'dash_field_phone',
  q: 'dash_field_search',
  reason: 'dash_field_reason',
  role: 'dash_field_role',
  code: 'dash_field_code',
}

/** Service reasons (English, as the API states them) and their words on a page. */
const REASONS: readonly {
  pattern: RegExp
  key: MessageKey
  /** Which captured groups are amounts in kuruş. */
  money?: readonly number[]
}[] = [
  {
    pattern: /^must not exceed the refundableAmount of (\d+)$/,
    key: 'dash_why_refund_over',
    money: [1],
  },
  {
    pattern: /^must not exceed the uncaptured remainder of (\d+)$/,
    key: 'dash_why_capture_over',
    money: [1],
  },
  { pattern: /^must not exceed the amount$/, key: 'dash_why_over_amount' },
  { pattern: /^overlaps a refund that is still in flight$/, key: 'dash_why_refund_in_flight' },
  { pattern: /^must be at least (\d+) characters/, key: 'dash_why_min_chars' },
  { pattern: /^(?:must be )?at most (\d+) characters/, key: 'dash_why_max_chars' },
  { pattern: /^must be at most (\d+) bytes/, key: 'dash_why_too_long' },
  { pattern: /^is not an email/, key: 'dash_why_email' },
  { pattern: /^does not match/, key: 'dash_why_no_match' },
  { pattern: /^is not your current password/, key: 'dash_why_not_current_password' },
  { pattern: /^is already your email/, key: 'dash_why_same_email' },
  { pattern: /^must not be after to|^must be before to/, key: 'dash_why_from_after_to' },
  { pattern: /^must be in the future/, key: 'dash_why_future' },
  { pattern: /^must be within two years|^must be at most two years/, key: 'dash_why_two_years' },
  { pattern: /^is required/, key: 'dash_why_required' },
  { pattern: /^must be between (\d+) and (\d+)/, key: 'dash_why_between' },
  {
    pattern: /^must be between 1 and (\d+), the amount still disputable/,
    key: 'dash_why_disputable',
    money: [1],
  },
  { pattern: /^at most (\d+) files/, key: 'dash_why_max_files' },
  { pattern: /^choose a file/, key: 'dash_why_choose_file' },
  { pattern: /must be a PDF, PNG or JPEG/, key: 'dash_why_file_type' },
  { pattern: /larger than|too large/, key: 'dash_why_file_size' },
  { pattern: /^evidence is empty/, key: 'dash_why_evidence_empty' },
  { pattern: /^must contain at least 1 row/, key: 'dash_why_csv_empty' },
  { pattern: /^at most (\d+) rows per draft/, key: 'dash_why_max_rows' },
  { pattern: /^already has a dashboard account/, key: 'dash_why_already_member' },
  { pattern: /^must be an IPv4 or IPv6 address/, key: 'dash_why_ip' },
  { pattern: /^must be the first 6 to 8 digits/, key: 'dash_why_bin' },
  { pattern: /^must have at most (\d+) keys/, key: 'dash_why_max_keys' },
  { pattern: /^must not contain NUL|control character/, key: 'dash_why_control_chars' },
  { pattern: /^is not a customer of this merchant/, key: 'dash_why_not_found' },
  { pattern: /^is not a store of this merchant/, key: 'dash_why_not_found' },
  { pattern: /^no such file/, key: 'dash_why_not_found' },
  { pattern: /^unknown columns? ([^;]+)/, key: 'dash_why_csv_columns' },
  { pattern: /already on the list/, key: 'dash_why_on_list' },
  { pattern: /review is already closed/, key: 'dash_why_review_closed' },
  { pattern: /chargeback is already resolved/, key: 'dash_why_chargeback_resolved' },
  { pattern: /exceeds the available balance/, key: 'dash_why_balance' },
  {
    pattern: /total (\d+) kuruş, more than the available balance/,
    key: 'dash_why_draft_balance',
    money: [1],
  },
  { pattern: /first 6 digits/, key: 'dash_why_bin6' },
  { pattern: /^unknown fact "([^"]+)"/, key: 'dash_why_unknown_fact' },
  { pattern: /^unknown operator "([^"]+)"/, key: 'dash_why_unknown_operator' },
  { pattern: /^more than (\d+) nodes|^nested deeper than/, key: 'dash_why_condition_size' },
  {
    pattern: /exactly one operator|must be a JSON Logic operation/,
    key: 'dash_why_condition_shape',
  },
]

/** Words in a service's English explanations; a page's own (localised) words have none. */
const ENGLISH =
  /\b(must|should|not|the|is|are|of|at|be|required|invalid|exceeds?|characters?|missing|no such|allowed|only|unknown|expected)\b/i

function issuesOf(error: AppError): FieldIssue[] {
  if (error.details?.length) return error.details
  const match = /^([\w.[\]]+): (.+)$/s.exec(error.message)
  return [
    match
      ? { field: match[1] ?? '', reason: match[2] ?? '' }
      : { field: '', reason: error.message },
  ]
}

function fieldLabel(lang: Lang, field: string): string | undefined {
  const key = FIELD_KEYS[field.split(/[.[]/)[0] ?? field]
  return key ? t(lang, key) : undefined
}

/** One issue in the page's language, or undefined when we have no words for it. */
export function issueText(lang: Lang, issue: FieldIssue): string | undefined {
  const label = fieldLabel(lang, issue.field)
  for (const rule of REASONS) {
    const match = rule.pattern.exec(issue.reason)
    if (!match) continue
    const vars: Record<string, string> = { field: label ?? t(lang, 'dash_field_this') }
    match.slice(1).forEach((value, i) => {
      const n = Number(value)
      // Numbers in the page's notation (amounts as money); words (column names) as they are.
      vars[`n${String(i + 1)}`] = !/^\d+$/.test(value)
        ? value
        : rule.money?.includes(i + 1) && Number.isSafeInteger(n)
          ? formatMoney(n, lang)
          : formatNumber(n, lang)
    })
    return t(lang, rule.key, vars)
  }
  // Our own words (a page's check, already in this language) pass through.
  if (!ENGLISH.test(issue.reason)) return issue.reason
  return label ? t(lang, 'dash_why_check_field', { field: label }) : undefined
}

/**
 * The text of a refused action: the kind of refusal, then what is wrong with which field,
 * in the page's language. Never the service's English text, never an amount in kuruş.
 */
export function refusalText(lang: Lang, error: AppError): string {
  const kind = t(lang, KIND_KEYS[error.code] ?? 'dash_err_generic')
  const issues = issuesOf(error)
    .map((i) => issueText(lang, i))
    .filter((text): text is string => text !== undefined)
  return issues.length ? `${kind} ${[...new Set(issues)].join(' ')}` : kind
}

/** The words to show next to one field (the first issue we can say), if any. */
export function fieldErrorText(lang: Lang, error: AppError, field: string): string | undefined {
  const issue = issuesOf(error).find((i) => i.field === field || i.field.startsWith(`${field}.`))
  return issue ? issueText(lang, issue) : undefined
}
