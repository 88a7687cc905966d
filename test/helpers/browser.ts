import { chromium, type Browser, type LaunchOptions } from 'playwright-core'

// The hosted-page browser tests drive Debian's chromium through playwright-core. `npm test`
// (scripts/test.ts) launches one chromium for the whole run and hands its endpoint to every
// test file in KURUS_TEST_BROWSER_WS; a file run any other way (node --test on its own)
// launches its own. Each test opens contexts of its own, so files sharing the browser do not
// see each other's cookies, storage or routes.

export const CHROMIUM: LaunchOptions = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
}

/** Set by scripts/test.ts: the shared chromium's playwright endpoint. */
export const BROWSER_ENDPOINT_ENV = 'KURUS_TEST_BROWSER_WS'

/**
 * The run's shared chromium, or one of this file's own. Close it in the file's `after`:
 * for the shared one that closes this file's contexts and disconnects, leaving it running.
 */
export function testBrowser(): Promise<Browser> {
  const endpoint = process.env[BROWSER_ENDPOINT_ENV]
  return endpoint ? chromium.connect(endpoint) : chromium.launch(CHROMIUM)
}

/**
 * For a route handler's catch: a request still in flight when its test closed the context
 * (the page went on, the test ended) fails with "…has been closed" or "…disposed"; that is the
 * end of the test, not a fault of the page. Anything else is rethrown.
 */
export function unlessClosed(error: unknown): void {
  if (/has been closed|has been disposed|Target closed/i.test(String(error))) return
  throw error
}
