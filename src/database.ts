import type { Kysely, Transaction } from 'kysely'
import type { Acquirer } from './modules/acquirer/acquirer.port.ts'
import type { Config } from './config.ts'
import type { Clock } from './platform/clock.ts'
import type { JobQueue } from './platform/jobs/queue.ts'
import type { Logger } from './platform/logger.ts'
import type { DisputesTables } from './modules/disputes/disputes.table.ts'
import type { FilesTables } from './modules/files/files.table.ts'
import type { EventsTables } from './modules/events/events.table.ts'
import type { GatewayTables } from './modules/gateway/gateway.table.ts'
import type { LedgerTables } from './modules/ledger/ledger.table.ts'
import type { MerchantsTables } from './modules/merchants/merchants.table.ts'
import type { PaymentsTables } from './modules/payments/payments.table.ts'
import type { AcquirerTables } from './modules/acquirer/acquirer.table.ts'
import type { VaultTables } from './modules/vault/vault.table.ts'
import type { WebhooksTables } from './modules/webhooks/webhooks.table.ts'
import type { MailTables } from './modules/mail/mail.table.ts'
import type { TransactionsTables } from './modules/transactions/transactions.table.ts'
import type { CustomersTables } from './modules/customers/customers.table.ts'
import type { CheckoutTables } from './modules/checkout/checkout.table.ts'
import type { PayoutsTables } from './modules/payouts/payouts.table.ts'
import type { SubscriptionsTables } from './modules/subscriptions/subscriptions.table.ts'
import type { InvoicesTables } from './modules/invoices/invoices.table.ts'
import type { PaymentLinksTables } from './modules/payment-links/payment-links.table.ts'
import type { AuditTables } from './modules/audit/audit.table.ts'
import type { DashboardTables } from './modules/dashboard/dashboard.table.ts'
import type { RiskTables } from './modules/risk/risk.table.ts'
import type { TestClocksTables } from './modules/test-clocks/test-clocks.table.ts'
import type { RequestLogsTables } from './modules/request-logs/request-logs.table.ts'

// The whole schema as Kysely sees it: each module declares its own tables in its
// <module>.table.ts, and only its repository queries them.
export type Database = MerchantsTables &
  WebhooksTables &
  MailTables &
  DisputesTables &
  FilesTables &
  GatewayTables &
  LedgerTables &
  EventsTables &
  PaymentsTables &
  VaultTables &
  AcquirerTables &
  CustomersTables &
  CheckoutTables &
  PayoutsTables &
  SubscriptionsTables &
  InvoicesTables &
  PaymentLinksTables &
  TransactionsTables &
  AuditTables &
  DashboardTables &
  RiskTables &
  TestClocksTables &
  RequestLogsTables

export type Db = Kysely<Database>
export type Tx = Transaction<Database>

/** What every use case receives: built once in app.ts (the composition root). */
export interface Deps {
  readonly db: Db
  /**
   * Where list, search and export queries read: a read replica's pool when DATABASE_READ_URL
   * is set, else `db` itself. Replicas lag, so never for a read that decides money or state,
   * nor for one that must see the caller's own write (docs/operations.md, "Read replicas").
   */
  readonly readDb: Db
  readonly clock: Clock
  readonly config: Config
  readonly log: Logger
  /** Enqueue background work inside a transaction: deps.jobs.enqueue(tx, name, data). */
  readonly jobs: JobQueue
  /** The card acquirer payments go through (the sandbox bank; tests may pass their own). */
  readonly acquirer: Acquirer<Deps>
}
