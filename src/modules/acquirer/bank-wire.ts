import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import XMLBuilder from 'fast-xml-builder'
import { XMLParser } from 'fast-xml-parser'
import { SyntaxValidator } from 'fast-xml-validator'

// What every bank connector shares: exact amounts, the bank's XML, and one HTTP round trip
// whose failure says whether the bank can have seen the request (routing fails over only
// when it surely did not; decision 0039).

/** Kuruş → the banks' decimal lira string ("100.25"): integer arithmetic, never a float. */
export function kurusToDecimal(minor: number): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new RangeError('amount must be kuruş')
  const lira = Math.trunc(minor / 100)
  const rest = minor % 100
  return `${lira}.${String(rest).padStart(2, '0')}`
}

/** The banks' decimal lira string → kuruş, or undefined for anything that is not one. */
export function decimalToKurus(text: string): number | undefined {
  const m = /^(\d{1,13})(?:[.,](\d{1,2}))?$/.exec(text.trim())
  if (!m) return undefined
  const fraction = (m[2] ?? '').padEnd(2, '0')
  return Number(m[1]) * 100 + Number(fraction)
}

/** ISO 4217 numeric code of the Turkish lira, the only currency Kuruş charges. */
export const TRY_NUMERIC = '949'

const builder = new XMLBuilder({ format: false, suppressEmptyNode: false, processEntities: true })
const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  ignoreDeclaration: true,
})

export type XmlValue = string | { [k: string]: XmlValue } | XmlValue[]

/** One XML document with the given root; values are escaped by the builder. */
export function buildXml(root: string, body: Record<string, XmlValue>, encoding: string): string {
  return `<?xml version="1.0" encoding="${encoding}"?>\n${builder.build({ [root]: body })}`
}

/** The document's root element as plain strings/objects, or undefined if it is not XML. */
export function parseXml(text: string, root: string): Record<string, unknown> | undefined {
  try {
    // The parser is lenient; a bank's cut or garbled answer must not pass for one.
    SyntaxValidator.validate(text)
    const doc = parser.parse(text) as Record<string, unknown>
    const value = doc[root]
    if (value === '' || value === undefined) return value === '' ? {} : undefined
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/** Decodes a bank's body by the charset its XML declaration or Content-Type names. */
export function decodeBody(bytes: Buffer, contentType: string | undefined): string {
  const head = bytes.subarray(0, 100).toString('latin1')
  const declared =
    /encoding="([\w-]+)"/i.exec(head)?.[1] ?? /charset=([\w-]+)/i.exec(contentType ?? '')?.[1]
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(bytes)
  } catch {
    return bytes.toString('utf8')
  }
}

export function str(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : ''
}

export interface BankTimeouts {
  /** Until the TCP (and TLS) connection stands: nothing was sent before. */
  connectMs: number
  /** From the request written to the whole answer read: the bank may have acted. */
  answerMs: number
}

export const DEFAULT_TIMEOUTS: BankTimeouts = { connectMs: 5_000, answerMs: 30_000 }

export type BankRoundTrip =
  | { kind: 'answer'; status: number; body: string }
  /** The request never left: connection refused, DNS, connect timeout. Surely not seen. */
  | { kind: 'not_sent'; reason: string }
  /** Sent, but no whole answer came back: the bank may have acted on it. */
  | { kind: 'no_answer'; reason: string }

const ANSWER_BYTES_MAX = 1024 * 1024

/** One POST to a bank. Never throws: the outcome says what the bank can have seen. */
export function postToBank(
  url: string,
  body: string,
  contentType: string,
  timeouts: BankTimeouts = DEFAULT_TIMEOUTS,
): Promise<BankRoundTrip> {
  return new Promise((resolve) => {
    let target: URL
    try {
      target = new URL(url)
    } catch {
      resolve({ kind: 'not_sent', reason: 'bad url' })
      return
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest
    let connected = false
    let settled = false
    const finish = (outcome: BankRoundTrip) => {
      if (settled) return
      settled = true
      clearTimeout(connectTimer)
      clearTimeout(answerTimer)
      resolve(outcome)
    }
    const payload = Buffer.from(body, 'latin1')
    const req = send(target, {
      method: 'POST',
      headers: { 'content-type': contentType, 'content-length': payload.length },
      agent: false,
    })
    const connectTimer = setTimeout(() => {
      if (connected) return
      finish({ kind: 'not_sent', reason: 'connect timeout' })
      req.destroy()
    }, timeouts.connectMs)
    let answerTimer: NodeJS.Timeout | undefined
    req.on('socket', (socket) => {
      const onConnect = () => {
        connected = true
        answerTimer = setTimeout(() => {
          finish({ kind: 'no_answer', reason: 'answer timeout' })
          req.destroy()
        }, timeouts.answerMs)
      }
      if (target.protocol === 'https:') socket.once('secureConnect', onConnect)
      else socket.once('connect', onConnect)
    })
    req.on('error', (error: NodeJS.ErrnoException) => {
      finish(
        connected
          ? { kind: 'no_answer', reason: error.code ?? 'socket error' }
          : { kind: 'not_sent', reason: error.code ?? 'connect error' },
      )
    })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > ANSWER_BYTES_MAX) {
          finish({ kind: 'no_answer', reason: 'answer too large' })
          req.destroy()
          return
        }
        chunks.push(chunk)
      })
      res.on('end', () => {
        const text = decodeBody(Buffer.concat(chunks), res.headers['content-type'])
        finish({ kind: 'answer', status: res.statusCode ?? 0, body: text })
      })
      res.on('error', () => finish({ kind: 'no_answer', reason: 'answer cut' }))
    })
    req.end(payload)
  })
}

/** What a bank said to an authorization (or to a capture, void, refund). */
export type BankOutcome =
  | { kind: 'approved'; authCode: string; hostReference: string; transId: string }
  | {
      kind: 'declined'
      bankCode: string
      message: string
      /** The bank refused because it holds this order id already: ask it what it holds. */
      duplicateOrder?: boolean
    }
  /** The bank surely did not act: safe to try another POS. */
  | { kind: 'not_sent'; reason: string }
  /** The bank may have acted: ask it (order inquiry) before anything else. */
  | { kind: 'unknown'; reason: string }

/** What an order inquiry found. */
export type InquiryOutcome =
  | {
      kind: 'approved'
      authCode: string
      hostReference: string
      /** What the bank holds as authorized (kuruş), when it says. */
      amount: number | undefined
      voided: boolean
    }
  | { kind: 'declined'; bankCode: string }
  | { kind: 'not_found' }
  | { kind: 'not_sent'; reason: string }
  | { kind: 'unknown'; reason: string }

/** A 3-D Secure form to post (auto-submitted by the buyer's browser) to the bank's gate. */
export interface ThreeDForm {
  action: string
  fields: Record<string, string>
}

/** What the bank's callback told after the buyer's 3-D Secure step, once checked. */
export type ThreeDCallback =
  | {
      ok: false
      /** unavailable: the bank that must resolve the callback (PosNet) did not answer. */
      reason: 'hash_mismatch' | 'order_mismatch' | 'amount_mismatch' | 'malformed' | 'unavailable'
    }
  | {
      ok: true
      authenticated: boolean
      mdStatus: string
      /** What the XML authorization of the 3D model needs (md, xid, eci, cavv). */
      authentication: Record<string, string>
      /** In the 3D Pay model the gate already authorized: its answer. */
      payment?: BankOutcome
    }
