import { sql, type Kysely } from 'kysely'

/** The environment a database belongs to differs from the one starting on it. */
export class InstallationMismatchError extends Error {
  override readonly name = 'InstallationMismatchError'
}

/**
 * Records the environment that first starts on this database, and refuses any other from then
 * on (migration 0240 says why). One statement; the row decides even when several processes
 * start at once. Databases created before the mark existed get it at their next start.
 */
export async function claimInstallation(db: Kysely<unknown>, env: 'demo' | 'live'): Promise<void> {
  const { rows } = await sql<{ env: string }>`
    with claimed as (
      insert into installation (env) values (${env})
      on conflict (singleton) do nothing
      returning env
    )
    select env from claimed
    union all
    select env from installation
    limit 1`.execute(db)
  const recorded = rows[0]?.env ?? env
  if (recorded !== env) {
    throw new InstallationMismatchError(
      `this database was set up by a KURUS_ENV=${recorded} process; KURUS_ENV=${env} refuses it ` +
        (recorded === 'demo'
          ? '(the demo printed its merchant keys and dashboard password). Use a new database for live'
          : '(the demo would seed a merchant and print keys into a live database)'),
    )
  }
}
