import type { Insertable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type { DashboardAccountLinkRow, DashboardAccountLinksTable } from './dashboard.table.ts'

// The SQL of an account's single-use links (password reset, email change), kept beside
// dashboard.repository.ts: same module, same tables' owner.

type Purpose = DashboardAccountLinksTable['purpose']

export async function insertAccountLink(
  tx: Db | Tx,
  row: Insertable<DashboardAccountLinksTable>,
): Promise<void> {
  await tx.insertInto('dashboard_account_links').values(row).execute()
}

/** Spends every open link of this purpose of the user (a newer one replaces them). */
export async function voidAccountLinks(
  tx: Db | Tx,
  userId: string,
  purpose: Purpose,
  at: Date,
): Promise<void> {
  await tx
    .updateTable('dashboard_account_links')
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute()
}

/** How many links of this purpose the user was sent since `since` (the mail throttle). */
export async function countAccountLinksSince(
  db: Db | Tx,
  userId: string,
  purpose: Purpose,
  since: Date,
): Promise<number> {
  const row = await db
    .selectFrom('dashboard_account_links')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export function findAccountLink(
  db: Db,
  tokenHash: string,
  purpose: Purpose,
): Promise<DashboardAccountLinkRow | undefined> {
  return db
    .selectFrom('dashboard_account_links')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .executeTakeFirst()
}

/** The link's row locked FOR UPDATE: two uses of one link take their turn, one wins. */
export function lockAccountLink(
  tx: Tx,
  tokenHash: string,
  purpose: Purpose,
): Promise<DashboardAccountLinkRow | undefined> {
  return tx
    .selectFrom('dashboard_account_links')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .forUpdate()
    .executeTakeFirst()
}

export async function spendAccountLink(tx: Tx, tokenHash: string, at: Date): Promise<boolean> {
  const result = await tx
    .updateTable('dashboard_account_links')
    .set({ used_at: at })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}
