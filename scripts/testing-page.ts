// Writes docs/testing-cards.md, the integrator's one "Testing" page (issue 38): test cards,
// 3-D Secure codes, async refunds and timeouts, webhook testing. The card table is generated:
// brand, type and installments come from the sandbox's own BIN table (acquirer `binInfo`),
// and what each card does is stated once, below, as data that
// test/docs/testing-cards.test.ts runs through the sandbox (every card charged, challenged,
// refunded and reconciled as the row says) and compares with the sandbox bank's own card
// table (src/modules/acquirer/sandbox-bank.ts). The test also fails when the committed page
// differs from what this script writes.
//   npm run docs:testing   → docs/testing-cards.md
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { format, resolveConfig } from 'prettier'
import { binInfo } from '../src/modules/acquirer/index.ts'

export const TESTING_PAGE = 'docs/testing-cards.md'

/** What the sandbox does with a card: the test holds the sandbox to each field. */
export interface TestCard {
  number: string
  /** 3-D Secure: no code asked, a challenge `123456` passes, or a challenge that always fails. */
  threeDs: 'frictionless' | 'challenge' | 'challenge_fails'
  /** The bank declines every authorization with this code. */
  declineCode?: 'card_declined' | 'insufficient_funds'
  /** Refunds answer 202 `pending` and complete or fail at the next reconciler run. */
  refund: 'sync' | 'async_completes' | 'async_fails'
  /** The bank's answer is lost: 202 `pending`, resolved by the reconciler. */
  answerLost?: boolean
  /** One more sentence for the page, if the fields above do not say it all. */
  note?: string
}

export const TEST_CARDS: readonly TestCard[] = [
  { number: '4155650100416111', threeDs: 'frictionless', refund: 'sync' },
  { number: '5528790000000008', threeDs: 'challenge', refund: 'sync' },
  { number: '4000000000003063', threeDs: 'challenge_fails', refund: 'sync' },
  { number: '5890040000000016', threeDs: 'frictionless', refund: 'sync' },
  { number: '9792020000000001', threeDs: 'frictionless', refund: 'sync' },
  {
    number: '4000000000000002',
    threeDs: 'frictionless',
    declineCode: 'card_declined',
    refund: 'sync',
  },
  {
    number: '4000000000009995',
    threeDs: 'frictionless',
    declineCode: 'insufficient_funds',
    refund: 'sync',
  },
  { number: '4000000000000259', threeDs: 'frictionless', refund: 'async_completes' },
  { number: '4000000000000697', threeDs: 'frictionless', refund: 'async_fails' },
  {
    number: '4000000000000119',
    threeDs: 'frictionless',
    refund: 'sync',
    answerLost: true,
    note: 'never charged twice',
  },
]

export const PASSING_OTP = '123456'

const BRANDS: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  troy: 'Troy',
  amex: 'American Express',
}

function installments(list: number[]): string {
  const last = list.at(-1) ?? 1
  return last === 1 ? '1' : `1–${last}`
}

function behaviour(card: TestCard): string {
  if (card.declineCode)
    return `declined: 402 \`SVC-PAY-3501\`, \`declineCode: ${card.declineCode}\``
  if (card.answerLost) {
    return `the bank's answer is lost: 202 \`pending\`, resolved to \`captured\` by the reconciler (\`POST /v1/sandbox/reconcile\`); ${card.note ?? ''}`
  }
  if (card.threeDs === 'challenge') {
    return `3-D Secure challenge: \`${PASSING_OTP}\` passes, any other code fails`
  }
  if (card.threeDs === 'challenge_fails') {
    return '3-D Secure challenge that always fails: 402, payment `failed`'
  }
  if (card.refund === 'async_completes') {
    return 'approved; refunds answer 202 `pending` and complete at the next reconciler run (`refund.completed`)'
  }
  if (card.refund === 'async_fails') {
    return 'approved; refunds answer 202 `pending` and then fail (`refund.failed`; the amount is refundable again)'
  }
  return 'approved, 3-D Secure frictionless (no code asked)'
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

/** The page, as `npm run docs:testing` writes it (formatted as `npm run lint` wants it). */
export async function testingPage(): Promise<string> {
  const file = resolve(import.meta.dirname, '..', TESTING_PAGE)
  const options = await resolveConfig(file)
  return format(pageText(), { ...options, filepath: file })
}

function pageText(): string {
  const cards = table(
    ['Number', 'Brand, type', 'Installments', 'What happens'],
    TEST_CARDS.map((card) => {
      const info = binInfo(card.number.slice(0, 6))
      return [
        `\`${card.number}\``,
        `${BRANDS[info.brand] ?? info.brand} ${info.cardType}`,
        installments(info.installments),
        behaviour(card),
      ]
    }),
  )
  const challenge = TEST_CARDS.find((c) => c.threeDs === 'challenge')?.number ?? ''
  const failing = TEST_CARDS.find((c) => c.threeDs === 'challenge_fails')?.number ?? ''
  const codes = table(
    ['Card', 'Code', 'Outcome'],
    [
      [
        `\`${challenge}\``,
        `\`${PASSING_OTP}\``,
        'the challenge passes: the payment is authorized or captured',
      ],
      [
        `\`${challenge}\``,
        'any other (`000000`)',
        'the challenge fails: 402 `SVC-PAY-3501`, payment `failed`',
      ],
      [`\`${failing}\``, `any, \`${PASSING_OTP}\` included`, 'the challenge fails'],
      [
        'a frictionless card a risk rule challenges (`require_3ds`, docs/risk.md)',
        `\`${PASSING_OTP}\``,
        'passes',
      ],
      [
        'any card, charged with `threeDSecure: false`',
        'none asked',
        'no challenge (decline rules still apply)',
      ],
    ],
  )
  const asyncRefunds = TEST_CARDS.filter((c) => c.refund !== 'sync')
    .map((c) => `\`${c.number}\` (${c.refund === 'async_completes' ? 'completes' : 'fails'})`)
    .join(' and ')
  return `<!-- Generated by \`npm run docs:testing\` (scripts/testing-page.ts): edit the script, not this file. -->

# Testing your integration in the sandbox

Everything here works against the sandbox that \`npm start\` runs (\`KURUS_ENV=demo\`, keys
\`pk_demo_…\`/\`sk_demo_…\`). No real card is charged and no bank is called: the sandbox bank
(\`src/modules/acquirer/sandbox-bank.ts\`) decides by card number. A test
(\`test/docs/testing-cards.test.ts\`) charges every card below through the API and checks that
it does what its row says, so this page and the sandbox cannot drift apart.

## Test cards

Any expiry in the future, any 3-digit CVC, any holder name. Every other Luhn-valid number is
approved without a challenge, one installment only; a Luhn failure, a past expiry or a
malformed CVC is a 400 at tokenization (\`POST /v1/cards/tokens\`).

${cards}

A charge with more installments than the card's BIN offers is declined
(\`installment_not_supported\`); \`GET /v1/installment-options?bin=…&amount=…\` lists what a card
can take.

## 3-D Secure codes

A challenged payment is \`pending_3ds\` with a \`challengeUrl\` (the bank's page, where a buyer
types the SMS code) and a \`correlationId\`. In tests, \`POST /v1/sandbox/payments/{id}/3ds-challenge\`
\`{"otp": "${PASSING_OTP}"}\` types the code for you and returns \`{correlationId, pares}\`, which your
server sends to \`POST /v1/payments/{id}/3ds-callback\` as it would after the bank's redirect.

${codes}

A \`pares\` is valid for 15 minutes and for its own payment only; another payment's, a forged or
an expired one is 400 \`SVC-3DS-3601\`.

## Refunds that finish later, and lost answers

Refunds of ${asyncRefunds} answer 202 \`pending\`. The outcome comes at the next reconciler run
(the worker runs it on its schedule); \`POST /v1/sandbox/reconcile\` runs it, and every other due
background job, at once. A failed refund's amount is refundable again.

\`4000000000000119\` plays a bank that approves but whose answer never arrives: the charge
answers 202 \`pending\`; the reconciler asks the bank what happened and settles the payment as
\`captured\` — once, however often you retry the charge with the same \`transactionId\`.

## Webhooks

- **To your machine:** \`npx kurus listen --forward-to http://localhost:4242/webhooks\` registers
  an endpoint for this machine, prints its \`whsec_…\` (kept between runs) and forwards every
  delivery to your server, printing your answer (docs/quickstart.md, step 2).
- **Events on demand:** \`npx kurus trigger payment.captured\` (or \`payment.failed\`,
  \`refund.failed\`, \`chargeback.received\`, …) makes the objects and events of a scenario in the
  sandbox; it refuses to run with a live key.
- **No waiting:** \`POST /v1/sandbox/reconcile\` (\`kurus.sandbox.reconcile()\`) delivers due
  events at once instead of when the worker gets to them.
- **Replays and history:** \`GET /v1/events\` is the feed webhooks deliver from; the dashboard
  (Geliştiriciler / Developers → Webhooks) shows each delivery with its answer and redelivers
  one; \`npx kurus logs tail\` shows your API requests, refused ones included.
- **Verifying:** deliveries are signed as Standard Webhooks (\`webhook-id\`, \`webhook-timestamp\`,
  \`webhook-signature\`): \`webhooks.verify\` of \`@kurus/node\`, or docs/webhooks.md by hand. In the
  sandbox a receiver on \`http://127.0.0.1\` is allowed; email the service would send is at
  \`/dev/mailbox\`.

## More sandbox tools

| Call                                              | What it does                                                          |
| ------------------------------------------------- | --------------------------------------------------------------------- |
| \`POST /v1/sandbox/kyc\`                            | sets the merchant's KYC status (charges need \`approved\`)              |
| \`POST /v1/sandbox/payments/{id}/chargebacks\`      | opens a chargeback on a captured payment (docs/disputes.md)           |
| \`POST /v1/sandbox/sessions/{id}/qr-pay\`           | pays a QR checkout session as the buyer's bank app would              |
| \`POST /v1/sandbox/test-clocks\`, \`…/advance\`       | a clock for customers and subscriptions (docs/test-clocks.md)         |
| \`POST /v1/sandbox/subscriptions/{id}/advance\`     | moves one subscription to its next charge (docs/subscriptions.md)     |

The API reference at \`/docs\` lists them all with examples, and its **Try it out** signs
requests with the demo keys in the browser. The Postman collection
(\`docs/kurus.postman_collection.json\`) does the same from Postman.
`
}

if (import.meta.main) {
  const out = resolve(import.meta.dirname, '..', TESTING_PAGE)
  writeFileSync(out, await testingPage())
  console.log(`wrote ${TESTING_PAGE}`)
}
