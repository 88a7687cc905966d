import type { Insertable, Updateable } from 'kysely'
import type { Db } from '../../database.ts'
import type { AcquirerPos3dsTable, Pos3dsRow } from './pos-3ds.table.ts'

/** The first challenge of a payment wins; a repeat finds it (undefined here). */
export function insertPos3ds(
  db: Db,
  row: Insertable<AcquirerPos3dsTable>,
): Promise<Pos3dsRow | undefined> {
  return db
    .insertInto('acquirer_pos_3ds')
    .values(row)
    .onConflict((oc) => oc.column('payment_id').doNothing())
    .returningAll()
    .executeTakeFirst()
}

export function findPos3ds(db: Db, paymentId: string): Promise<Pos3dsRow | undefined> {
  return db
    .selectFrom('acquirer_pos_3ds')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .executeTakeFirst()
}

/** Records the gate's verdict once: only a waiting challenge moves (duplicate callbacks). */
export function settlePos3ds(
  db: Db,
  paymentId: string,
  patch: Updateable<AcquirerPos3dsTable>,
): Promise<Pos3dsRow | undefined> {
  return db
    .updateTable('acquirer_pos_3ds')
    .set(patch)
    .where('payment_id', '=', paymentId)
    .where('state', '=', 'waiting')
    .returningAll()
    .executeTakeFirst()
}
