import { sql, type Insertable, type Selectable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type {
  ApiKeyRow,
  DashboardLoginThrottlesTable,
  DashboardUsersTable,
  KycStatus,
  MerchantRow,
  MerchantsTable,
  NewApiKey,
  StoreRow,
  StoresTable,
  SubmerchantRow,
  SubmerchantsTable,
} from './merchants.table.ts'

export async function insertMerchant(tx: Tx, row: Insertable<MerchantsTable>): Promise<void> {
  await tx.insertInto('merchants').values(row).execute()
}

export async function insertStore(tx: Tx, row: Insertable<StoresTable>): Promise<void> {
  await tx.insertInto('stores').values(row).execute()
}

export async function insertSubmerchant(tx: Tx, row: Insertable<SubmerchantsTable>): Promise<void> {
  await tx.insertInto('submerchants').values(row).execute()
}

export async function insertApiKey(tx: Tx, row: NewApiKey): Promise<void> {
  await tx.insertInto('api_keys').values(row).execute()
}

export async function insertDashboardUser(
  tx: Tx,
  row: Insertable<DashboardUsersTable>,
): Promise<void> {
  await tx.insertInto('dashboard_users').values(row).execute()
}

export function findMerchantById(db: Db, id: string): Promise<MerchantRow | undefined> {
  return db.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst()
}

export function lockMerchantById(tx: Tx, id: string): Promise<MerchantRow | undefined> {
  return tx.selectFrom('merchants').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

export async function updateMerchantKyc(
  tx: Tx,
  id: string,
  status: KycStatus,
  decidedAt: Date | null,
): Promise<void> {
  await tx
    .updateTable('merchants')
    .set({ kyc_status: status, kyc_decided_at: decidedAt })
    .where('id', '=', id)
    .execute()
}

/** NOTIFY at commit (merchants.cache.ts): the merchant's keys or row changed. */
export async function notifyMerchantChanged(
  tx: Tx,
  channel: string,
  merchantId: string,
): Promise<void> {
  await sql`select pg_notify(${channel}, ${merchantId})`.execute(tx)
}

export function countMerchants(db: Db): Promise<{ n: number }> {
  return db
    .selectFrom('merchants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
}

export function findOldestMerchant(db: Db): Promise<MerchantRow | undefined> {
  return db.selectFrom('merchants').selectAll().orderBy('created_at').limit(1).executeTakeFirst()
}

export function findStoreById(
  db: Db,
  merchantId: string,
  storeId: string,
): Promise<StoreRow | undefined> {
  return db
    .selectFrom('stores')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', storeId)
    .executeTakeFirst()
}

export function findSubmerchantById(
  db: Db,
  merchantId: string,
  submerchantId: string,
): Promise<SubmerchantRow | undefined> {
  return db
    .selectFrom('submerchants')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', submerchantId)
    .executeTakeFirst()
}

export function findSubmerchantsByIds(
  db: Db,
  merchantId: string,
  ids: readonly string[],
): Promise<SubmerchantRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db
    .selectFrom('submerchants')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', 'in', ids)
    .execute()
}

export interface ApiKeyWithKyc extends ApiKeyRow {
  kyc_status: KycStatus
}

/** The gateway's one read per request: the key and its merchant's KYC status. */
export function findApiKeyByPublicKey(
  db: Db,
  publicKey: string,
): Promise<ApiKeyWithKyc | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('merchants', 'merchants.id', 'api_keys.merchant_id')
    .selectAll('api_keys')
    .select('merchants.kyc_status')
    .where('api_keys.public_key', '=', publicKey)
    .executeTakeFirst()
}

export function lockApiKeyById(
  tx: Tx,
  merchantId: string,
  keyId: string,
): Promise<ApiKeyRow | undefined> {
  return tx
    .selectFrom('api_keys')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', keyId)
    .forUpdate()
    .executeTakeFirst()
}

export function findApiKeysByMerchant(db: Db, merchantId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .execute()
}

export async function updateApiKeyRolled(
  tx: Tx,
  keyId: string,
  expiresAt: Date,
  rolledTo: string,
): Promise<void> {
  await tx
    .updateTable('api_keys')
    .set({ expires_at: expiresAt, rolled_to: rolledTo })
    .where('id', '=', keyId)
    .execute()
}

export async function updateApiKeyRevoked(tx: Tx, keyId: string, at: Date): Promise<void> {
  await tx
    .updateTable('api_keys')
    .set({ status: 'revoked', revoked_at: at })
    .where('id', '=', keyId)
    .where('status', '=', 'active')
    .execute()
}

export function findDashboardUserByEmail(
  db: Db,
  email: string,
): Promise<Selectable<DashboardUsersTable> | undefined> {
  return db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('email', '=', email.toLowerCase())
    .executeTakeFirst()
}

/** Replaces a hash with one of the same password at the current cost (unless it changed). */
export async function upgradePasswordHash(
  db: Db,
  userId: string,
  from: string,
  to: string,
): Promise<void> {
  await db
    .updateTable('dashboard_users')
    .set({ password_hash: to })
    .where('id', '=', userId)
    .where('password_hash', '=', from)
    .execute()
}

export function findDashboardUsersByMerchant(
  db: Db,
  merchantId: string,
): Promise<Selectable<DashboardUsersTable>[]> {
  return db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .execute()
}

// ---- dashboard sign-in lockout

type LoginThrottleRow = Selectable<DashboardLoginThrottlesTable>

/**
 * The email's lockout row, created empty if missing, locked FOR UPDATE: concurrent sign-ins
 * for one email (from any process) take their turn, so none slips past the count.
 */
export async function lockLoginThrottle(
  tx: Tx,
  emailKey: string,
  now: Date,
): Promise<LoginThrottleRow> {
  await tx
    .insertInto('dashboard_login_throttles')
    .values({ email_key: emailKey, failures: '[]', locked_until: null, expires_at: now })
    .onConflict((oc) => oc.column('email_key').doNothing())
    .execute()
  return tx
    .selectFrom('dashboard_login_throttles')
    .selectAll()
    .where('email_key', '=', emailKey)
    .forUpdate()
    .executeTakeFirstOrThrow()
}

export async function updateLoginThrottle(
  tx: Tx,
  emailKey: string,
  state: { failures: number[]; lockedUntil: Date | null; expiresAt: Date },
): Promise<void> {
  await tx
    .updateTable('dashboard_login_throttles')
    .set({
      failures: JSON.stringify(state.failures),
      locked_until: state.lockedUntil,
      expires_at: state.expiresAt,
    })
    .where('email_key', '=', emailKey)
    .execute()
}

export async function deleteLoginThrottle(db: Db, emailKey: string): Promise<void> {
  await db.deleteFrom('dashboard_login_throttles').where('email_key', '=', emailKey).execute()
}

/** Deletes up to `limit` rows whose window and lock are over. */
export async function deleteExpiredLoginThrottles(db: Db, now: Date, limit: number) {
  await db
    .deleteFrom('dashboard_login_throttles')
    .where('email_key', 'in', (q) =>
      q
        .selectFrom('dashboard_login_throttles')
        .select('email_key')
        .where('expires_at', '<=', now)
        .limit(limit),
    )
    .execute()
}

// ---- master-key rotation: every key's sealed secret, in id order

export function findApiKeySecretsAfter(
  db: Db,
  afterId: string | null,
  limit: number,
): Promise<Pick<ApiKeyRow, 'id' | 'secret_enc'>[]> {
  let query = db.selectFrom('api_keys').select(['id', 'secret_enc'])
  if (afterId !== null) query = query.where('id', '>', afterId)
  return query.orderBy('id').limit(limit).execute()
}

export function findApiKeySecret(
  db: Db,
  id: string,
): Promise<Pick<ApiKeyRow, 'id' | 'secret_enc'> | undefined> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'secret_enc'])
    .where('id', '=', id)
    .executeTakeFirst()
}

/** Conditional: false if the secret was replaced since `from` was read. */
export async function updateApiKeySecretIfUnchanged(
  db: Db,
  id: string,
  from: string,
  to: string,
): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ secret_enc: to })
    .where('id', '=', id)
    .where('secret_enc', '=', from)
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}
