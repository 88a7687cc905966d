import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

// The loopback harness every bank simulator runs in: one HTTP server whose faults are set
// by the test (or the demo) at any time. The bank's own logic is a BankHandler.

export interface SimulatorFaults {
  /** Connection refused: the listener is closed while down. */
  down: boolean
  /** 503 before the bank looks at the request. */
  http5xx: boolean
  /** Never answers and never acts: a timeout before the bank accepted anything. */
  hangBeforeProcessing: boolean
  /** Acts, then never answers: a timeout after sending. */
  hangAfterProcessing: boolean
  /** Acts, then answers with a body that is not the bank's XML. */
  malformed: boolean
  /** Acts, then answers after this many milliseconds. */
  delayMs: number
}

export const NO_FAULTS: SimulatorFaults = {
  down: false,
  http5xx: false,
  hangBeforeProcessing: false,
  hangAfterProcessing: false,
  malformed: false,
  delayMs: 0,
}

export interface BankAnswer {
  status: number
  contentType: string
  body: string
}

/** The bank: path and raw body in, answer out. It acts (books the order) when called. */
export type BankHandler = (path: string, body: string) => BankAnswer

export interface RunningSimulator {
  /** http://127.0.0.1:<port> */
  readonly base: string
  faults: SimulatorFaults
  /** Requests that reached the bank's logic (not refused, not 5xx). */
  readonly processed: { path: string; body: string }[]
  setDown(down: boolean): Promise<void>
  close(): Promise<void>
}

const BODY_BYTES_MAX = 256 * 1024

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > BODY_BYTES_MAX) req.destroy(new Error('body too large'))
      else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')))
    req.on('error', reject)
  })
}

/** Where a simulator listens: loopback, a free port unless one is given (the demo's). */
export interface SimulatorListen {
  host?: string
  port?: number
}

export async function runSimulator(
  handler: BankHandler,
  at: SimulatorListen = {},
): Promise<RunningSimulator> {
  const processed: { path: string; body: string }[] = []
  const hanging = new Set<ServerResponse>()
  const sim = {
    base: '',
    faults: { ...NO_FAULTS },
    processed,
    setDown,
    close,
  }
  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req)
    const faults = sim.faults
    if (faults.http5xx) {
      res.writeHead(503, { 'content-type': 'text/html' }).end('<h1>503 Service Unavailable</h1>')
      return
    }
    if (faults.hangBeforeProcessing) {
      hanging.add(res)
      return
    }
    const path = new URL(req.url ?? '/', 'http://sim').pathname
    let answer: BankAnswer
    try {
      answer = handler(path, body)
    } catch {
      answer = { status: 500, contentType: 'text/plain', body: 'internal error' }
    }
    processed.push({ path, body })
    if (faults.hangAfterProcessing) {
      hanging.add(res)
      return
    }
    if (faults.delayMs > 0) await sleep(faults.delayMs)
    if (faults.malformed) {
      res.writeHead(200, { 'content-type': 'text/xml' }).end('<CC5Response><OrderId>')
      return
    }
    res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body)
  }
  let server: Server = createServer((req, res) => void onRequest(req, res))
  let port = at.port ?? 0
  const host = at.host ?? '127.0.0.1'
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        port = (server.address() as AddressInfo).port
        resolve()
      })
    })
  await listen()
  sim.base = `http://${host}:${port}`

  function stop(): Promise<void> {
    for (const res of hanging) res.destroy()
    hanging.clear()
    server.closeAllConnections()
    return new Promise((resolve) => server.close(() => resolve()))
  }
  async function setDown(down: boolean): Promise<void> {
    if (down === sim.faults.down) return
    sim.faults = { ...sim.faults, down }
    if (down) await stop()
    else {
      server = createServer((req, res) => void onRequest(req, res))
      await listen()
    }
  }
  async function close(): Promise<void> {
    if (!sim.faults.down) await stop()
  }
  return sim
}

/** A page whose form the buyer's browser posts on its own (the banks' callback idiom). */
export function autoPostPage(action: string, fields: Record<string, string>): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  const inputs = Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('')
  return `<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${esc(action)}">${inputs}<noscript><button>Devam</button></noscript></form></body></html>`
}

/** The hidden inputs of an auto-post page (what a test's "browser" posts back). */
export function fieldsOfAutoPostPage(html: string): {
  action: string
  fields: Record<string, string>
} {
  const unesc = (s: string) =>
    s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
  const action = unesc(/<form method="post" action="([^"]*)"/.exec(html)?.[1] ?? '')
  const fields: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    fields[unesc(m[1] ?? '')] = unesc(m[2] ?? '')
  }
  return { action, fields }
}
