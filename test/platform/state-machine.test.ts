import assert from 'node:assert/strict'
import { test } from 'node:test'
import { stateMachine } from '../../src/platform/state-machine.ts'
import { PAYMENTS } from '../../src/modules/payments/payments.table.ts'
import { SUBSCRIPTIONS } from '../../src/modules/subscriptions/subscriptions.table.ts'

// The tables themselves are exercised through HTTP by each module's tests (every 409 on a
// move from the wrong status); this checks the helper's own contract.

const doors = stateMachine<'open' | 'closed' | 'locked' | 'gone'>({
  open: ['closed', 'gone'],
  closed: ['open', 'locked'],
  locked: ['closed'],
  gone: [],
})

test('guard: the conditional update may only start from statuses the table allows', () => {
  assert.deepEqual(doors.guard('closed'), ['open', 'locked'])
  // A caller expecting open or gone gets only open: gone is final.
  assert.deepEqual(doors.guard('closed', ['open', 'gone']), ['open'])
  // Asking for a move the table never allows is a programming error, never a silent no-op.
  assert.throws(() => doors.guard('locked', ['open']), /no status of \[open\] may move to locked/)
  assert.throws(() => doors.guard('gone', ['locked']), /may move to gone/)
})

test('can, isFinal, assertMove', () => {
  assert.equal(doors.can('open', 'closed'), true)
  assert.equal(doors.can('open', 'locked'), false)
  assert.equal(doors.can('open', 'open'), false)
  assert.equal(doors.isFinal('gone'), true)
  assert.equal(doors.isFinal('locked'), false)
  doors.assertMove('locked', 'locked', 'door 1') // bookkeeping, not a move
  assert.throws(() => doors.assertMove('gone', 'open', 'door 1'), /door 1: gone → open/)
})

test('module tables: terminal statuses are final and every status is reachable', () => {
  for (const [name, machine, initial] of [
    ['payments', PAYMENTS, 'pending'],
    ['subscriptions', SUBSCRIPTIONS, 'active'],
  ] as const) {
    const statuses = Object.keys(machine.transitions)
    const seen = new Set<string>([initial, 'trialing'].filter((s) => statuses.includes(s)))
    let grew = true
    while (grew) {
      grew = false
      for (const from of [...seen]) {
        for (const to of (machine.transitions as Record<string, readonly string[]>)[from] ?? []) {
          if (!seen.has(to)) {
            seen.add(to)
            grew = true
          }
        }
      }
    }
    assert.deepEqual([...seen].sort(), [...statuses].sort(), `${name}: unreachable statuses`)
  }
  assert.equal(PAYMENTS.isFinal('refunded'), true)
  assert.equal(PAYMENTS.can('captured', 'voided'), false)
  assert.equal(SUBSCRIPTIONS.can('past_due', 'paused'), false)
})
