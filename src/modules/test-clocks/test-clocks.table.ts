import type { Selectable } from 'kysely'

export type TestClockStatus = 'ready' | 'advancing'

/** Sandbox test clocks (migration 0320, docs/decisions/0031-test-clocks.md). */
export interface TestClocksTable {
  id: string
  merchant_id: string
  name: string | null
  frozen_time: Date
  status: TestClockStatus
  created_at: Date
  updated_at: Date
}

export interface TestClocksTables {
  test_clocks: TestClocksTable
}

export type TestClockRow = Selectable<TestClocksTable>
