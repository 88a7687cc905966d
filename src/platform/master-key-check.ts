import { sql, type Kysely } from 'kysely'
import { decrypt, encrypt } from './crypto.ts'

// The master key check (migration 0420): a known text sealed under the master key at the
// database's first start. Every later start opens it before serving: a process given another
// key (a fresh `openssl rand` pasted into a start command, a secret store that lost the old
// value) would otherwise start, then fail every card charge and every signature check, and
// write new secrets under a key nothing else opens.

const CHECK_TEXT = 'kurus master key check v1'
const AAD = 'master_key_check'

/** No held key opens what the database holds. */
export class MasterKeyMismatchError extends Error {
  override readonly name = 'MasterKeyMismatchError'
}

export type MasterKeyCheck =
  /** Sealed under KURUS_MASTER_KEY (or written now, at the database's first start). */
  | 'current'
  /** Sealed under a key of KURUS_MASTER_KEY_PREVIOUS: a rotation in progress. */
  | 'previous'

function opens(key: Buffer, sealed: string): boolean {
  try {
    return decrypt(key, sealed, AAD).toString('utf8') === CHECK_TEXT
  } catch {
    return false
  }
}

/**
 * Writes the check row on the first start (one statement: concurrent first starts agree on
 * one row), then opens it with the current key or a previous one.
 */
export async function checkMasterKey(
  db: Kysely<unknown>,
  keys: { masterKey: Buffer; masterKeyPrevious: readonly Buffer[] },
): Promise<MasterKeyCheck> {
  const { rows } = await sql<{ sealed: string }>`
    with written as (
      insert into master_key_check (sealed) values (${encrypt(keys.masterKey, CHECK_TEXT, AAD)})
      on conflict (singleton) do nothing
      returning sealed
    )
    select sealed from written
    union all
    select sealed from master_key_check
    limit 1`.execute(db)
  const sealed = rows[0]?.sealed
  if (sealed === undefined || opens(keys.masterKey, sealed)) return 'current'
  if (keys.masterKeyPrevious.some((key) => opens(key, sealed))) return 'previous'
  throw new MasterKeyMismatchError(
    'KURUS_MASTER_KEY cannot decrypt what this database holds: the master key check written ' +
      'at its first start (table master_key_check) opens under neither KURUS_MASTER_KEY nor ' +
      'any key in KURUS_MASTER_KEY_PREVIOUS. This is not the key the stored cards and secrets ' +
      'are under: start with that key. To change keys, follow the master key rotation ' +
      'runbook (docs/operations.md)',
  )
}

/** After `kurus rotate-master-key` has finished: the check is sealed under the current key. */
export async function resealMasterKeyCheck(db: Kysely<unknown>, masterKey: Buffer): Promise<void> {
  await sql`update master_key_check
            set sealed = ${encrypt(masterKey, CHECK_TEXT, AAD)}, resealed_at = now()`.execute(db)
}
