import { createHash } from 'node:crypto'

/**
 * Names for the statements Kysely sends, so that node-postgres prepares each once per
 * connection and PostgreSQL parses it once there, and after five runs plans it once (its
 * generic plan) instead of at every execution. In a charge, parse and planning took more of
 * the server's time than executing the statements did (docs/performance.md, "Round 3, part
 * 4"; decision 0044).
 *
 * The name is derived from the text, so one text has one name in every process and on every
 * connection, and node-postgres's rule (one text per name) holds. A process names at most
 * `limit` distinct texts: every connection may end up holding each of them, with its plan, in
 * server memory, and the hot statements are the first ones seen. Texts past the limit run
 * unnamed, as they did before.
 */
export class StatementNames {
  readonly #names = new Map<string, string>()
  readonly #limit: number

  constructor(limit: number) {
    this.#limit = limit
  }

  /** The name for this text, or undefined when it runs unnamed (past the limit). */
  nameFor(text: string): string | undefined {
    const known = this.#names.get(text)
    if (known !== undefined || this.#names.size >= this.#limit) return known
    const name = `k${createHash('sha1').update(text).digest('base64url')}`
    this.#names.set(text, name)
    return name
  }
}

/**
 * PostgreSQL refuses a prepared statement whose result columns changed since it was prepared
 * (a migration added a column to a table it selects `*` from): SQLSTATE 0A000, "cached plan
 * must not change result type". The statement is fine; only its preparation is stale.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null
  return (
    e?.code === '0A000' &&
    typeof e.message === 'string' &&
    e.message.includes('cached plan must not change result type')
  )
}
