import assert from 'node:assert/strict'
import { test } from 'node:test'
import { OutcomeSignal } from '../../src/platform/outcome-signal.ts'

// Captures, voids and duplicate 3DS submits wait through this signal; their HTTP tests
// (payments/captures, payments/three-ds) check the outcomes. Here: the wake-up itself, with
// the timers mocked so that only a notify can end a wait.

test('a notify wakes every waiter on its key at once, and only those', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const signal = new OutcomeSignal()
  const woken: string[] = []
  const a1 = signal.wait('pay_a', 5_000).then(() => woken.push('a1'))
  const a2 = signal.wait('pay_a', 5_000).then(() => woken.push('a2'))
  const b = signal.wait('pay_b', 5_000).then(() => woken.push('b'))
  assert.equal(signal.size, 3)
  signal.notify('pay_a')
  await Promise.all([a1, a2])
  assert.deepEqual(woken.sort(), ['a1', 'a2'])
  assert.equal(signal.size, 1)
  // Without a notify, the wait ends at its bound (the fallback re-read).
  t.mock.timers.tick(5_000)
  await b
  assert.deepEqual(woken.sort(), ['a1', 'a2', 'b'])
  assert.equal(signal.size, 0)
  signal.notify('pay_a') // nobody waiting: a no-op
})
