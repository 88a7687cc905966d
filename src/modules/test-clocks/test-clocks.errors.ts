import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type TestClocksErrorCode =
  'test_clock_not_found' | 'test_clock_advancing' | 'test_clocks_limit'

const table: ErrorTable<TestClocksErrorCode> = {
  test_clock_not_found: {
    code: 'SVC-RES-3301',
    status: 404,
    message: 'test clock not found',
  },
  test_clock_advancing: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the test clock is advancing; try again when its status is ready',
  },
  test_clocks_limit: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'a merchant has at most 100 test clocks; delete one first',
  },
}

export const testClocksError = errorFactory(table)
