import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely'

// Forward-only migrations, one file each, named NNNN_<verb>_<noun>.ts and applied in name
// order. Kysely's migrator takes a PostgreSQL advisory lock, so several processes starting
// together apply each migration once.
const MIGRATIONS_DIR = join(fileURLToPath(new URL('.', import.meta.url)), 'migrations')

class FolderMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.*\.ts$/.test(f)).sort()
    const migrations: Record<string, Migration> = {}
    for (const file of files) {
      migrations[file.replace(/\.ts$/, '')] = (await import(
        join(MIGRATIONS_DIR, file)
      )) as Migration
    }
    return migrations
  }
}

export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new FolderMigrationProvider() })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error('migration failed', { cause: error })
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
