// Sandbox test clocks: a frozen time that the objects created on it live at
// (docs/decisions/0031-test-clocks.md). Other modules import only this file.
export {
  createTestClock,
  depsOnClock,
  finishTestClockAdvance,
  getTestClock,
  listTestClocks,
  lockTestClockForDelete,
  nowOnClock,
  removeTestClock,
  setTestClockTime,
  startTestClockAdvance,
  testClockTime,
  type TestClock,
} from './test-clocks.service.ts'
