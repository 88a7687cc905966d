// A loopback HTTP receiver for webhook deliveries: answers 200 and keeps every raw body.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

export interface Receiver {
  url: string
  bodies: string[]
}

export async function startReceiver(t: TestContext): Promise<Receiver> {
  const receiver: Receiver = { url: '', bodies: [] }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      receiver.bodies.push(Buffer.concat(chunks).toString('utf8'))
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return receiver
}
