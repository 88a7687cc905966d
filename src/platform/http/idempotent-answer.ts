import type { FastifyReply } from 'fastify'

// Exactly once under faults (decision 0035): a state-changing use case writes its
// Idempotency-Key record inside its own transactions, so the key, what the request made and
// the answer it gives can never part. The gateway hands the route this port (null without a
// key); the route hands the use case what it needs of it. Typed over the database handle
// because platform names no module's tables.

export interface RecordedAnswer {
  status: number
  body: string
  contentType: string
}

export interface IdempotentAnswer<Db> {
  /**
   * What an earlier attempt with this key made in its claim transaction and never finished
   * (a payment id, a capture id): the use case resumes it rather than start over. Null for a
   * first attempt, or when the earlier one made nothing.
   */
  readonly resumeId: string | null
  /** Inside the claim transaction: the key is this request's and names `resourceId`. */
  claim(db: Db, resourceId: string): Promise<void>
  /** Inside the outcome transaction: the final answer, serialized as the route sends it. */
  record(db: Db, status: number, payload: unknown): Promise<void>
  /** What `record` wrote, once it did: the route sends exactly these bytes. */
  readonly recorded: RecordedAnswer | null
  /** Whether the recorded answer is committed (its transaction may have rolled back). */
  committed(): Promise<boolean>
}

/**
 * Runs a use case that may record its answer in its outcome transaction and answers with
 * the recorded bytes when it did (also when it then throws, as a decline does after its
 * commit); otherwise as `send` says.
 */
export async function answerOnce<T, Db>(
  reply: FastifyReply,
  answer: IdempotentAnswer<Db> | null,
  run: () => Promise<T>,
  send: (value: T) => FastifyReply,
): Promise<FastifyReply> {
  let value: T
  try {
    value = await run()
  } catch (error) {
    // A failure after the outcome committed: the recorded answer is what the request did.
    const recorded = answer?.recorded
    if (recorded && (await answer.committed().catch(() => false))) {
      return sendRecorded(reply, recorded)
    }
    throw error
  }
  if (answer?.recorded) return sendRecorded(reply, answer.recorded)
  return send(value)
}

function sendRecorded(reply: FastifyReply, recorded: RecordedAnswer): FastifyReply {
  return reply.code(recorded.status).type(recorded.contentType).send(recorded.body)
}

/**
 * The use case's side of the port for a single-transaction call: inside the transaction
 * that makes the effect, records the answer the route would send for `value`.
 */
export type RecordAnswer<Tx, T> = (tx: Tx, value: T) => Promise<void>

/**
 * A RecordAnswer for `port` (undefined without a key): the status and body the route sends
 * for the use case's value, written by the use case's own transaction (decision 0035).
 */
export function recordWith<Db, T>(
  port: IdempotentAnswer<Db> | null,
  status: number | ((value: T) => number),
  json: (value: T) => unknown,
): RecordAnswer<Db, T> | undefined {
  if (!port) return undefined
  return (tx, value) =>
    port.record(tx, typeof status === 'number' ? status : status(value), json(value))
}
