// Test-only fault injection for the delivery worker. Production code never sets it; tests
// use it to crash an attempt between sending and recording, the window at-least-once
// delivery has to survive. Process-wide, so tests that use it run one at a time.
export const deliveryFaults = {
  /** Throw once after the receiver answered and before the outcome is recorded. */
  crashBeforeRecordOnce: false,
}
