import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino'

export type Logger = PinoLogger

// Card data and secrets never reach a log line. Request bodies are not logged at all; these
// paths catch them anyway if someone logs an object that carries them.
export const REDACT_PATHS = [
  'req.headers["x-signature"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-signature"]',
  'headers.authorization',
  '*.cardNumber',
  '*.number',
  '*.cvc',
  '*.secretKey',
  '*.secret',
  '*.password',
  '*.pan',
  'card.number',
  'card.cvc',
  'body.card',
  'body.cardNumber',
  'body.cvc',
  'body.password',
]

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'kurus' } },
    destination,
  )
}
