import type { Db } from '../../database.ts'
import type { PaymentRow } from './payments.table.ts'

// SQL the hosted pages need beyond payments.repository.ts: the ACS page knows only the
// payment id from its URL (the id is the bearer there, as for the public status), so this
// one lookup is not scoped by merchant. Callers must not return the row to the browser.

export function findPaymentByIdUnscoped(
  db: Db,
  paymentId: string,
): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('id', '=', paymentId).executeTakeFirst()
}
