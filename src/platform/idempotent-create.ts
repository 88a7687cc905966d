import { isUniqueViolation } from './db/transaction.ts'

/**
 * A create that one Idempotency-Key makes at most once: claim → run → answer.
 *
 * The gateway's record answers most retries with the stored response, but not all: a 202 is
 * re-run, a record can expire or be released by a 5xx, and another of the merchant's API keys
 * has a record of its own. So a resource made under a key also stores the key on its row (a
 * unique index), and this is how every such create reads it:
 *
 * 1. `find` what an earlier request under the key made; if there is one, `replay` answers
 *    the retry (its current state, or a 409 if the retry asks for something else);
 * 2. `claim`: record the new resource with its key, in one transaction;
 * 3. `run` the work that follows the commit (an acquirer call, a read back) and answer.
 *
 * Two concurrent requests with one key both miss in step 1; the loser's claim violates
 * `uniqueIndex`, and it answers with the winner's resource instead. A caller that serialises
 * its keys itself (the whole call under a lock, so the race never reaches the index) leaves
 * `uniqueIndex` out. Keys compare case-insensitively, as the gateway's record does.
 */
export async function createOnce<Earlier, Claimed, Answer>(
  idempotencyKey: string | undefined,
  steps: {
    find: (key: string) => Promise<Earlier | undefined>
    replay: (earlier: Earlier) => Answer | Promise<Answer>
    claim: (key: string | null) => Promise<Claimed>
    run: (claimed: Claimed) => Answer | Promise<Answer>
    uniqueIndex?: string
  },
): Promise<Answer> {
  const key = idempotencyKey?.toLowerCase() ?? null
  if (key !== null) {
    const earlier = await steps.find(key)
    if (earlier !== undefined) return steps.replay(earlier)
  }
  let claimed: Claimed
  try {
    claimed = await steps.claim(key)
  } catch (error) {
    if (key !== null && steps.uniqueIndex && isUniqueViolation(error, steps.uniqueIndex)) {
      const winner = await steps.find(key)
      if (winner !== undefined) return steps.replay(winner)
    }
    throw error
  }
  return steps.run(claimed)
}
