import { Context, Effect, Layer } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Deliverer from "../../services/notifier/Deliverer.ts"
import { Outbox } from "../../services/notifier/Outbox.ts"
import { makeSenders } from "../../services/notifier/senders.ts"
import { Wakeup } from "../../services/notifier/Wakeup.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { withConfig } from "./stores.ts"

/** One request a webhook receiver got: its raw bytes (signatures are computed over them) and what it answered. */
export interface Delivered {
  readonly method: string
  readonly path: string
  /** As a receiver's framework gives them: lower-case names, one string each. */
  readonly headers: Record<string, string>
  readonly body: Buffer
  readonly answered: number
}

/** A webhook receiver on 127.0.0.1 (any path) that answers 500 to the first `failFirst.n` requests, then 200. */
export class FailingFirstReceiver extends Context.Service<FailingFirstReceiver, {
  readonly url: string
  readonly received: Array<Delivered>
  readonly failFirst: { n: number }
}>()("test/support/FailingFirstReceiver") {}

const flat = (headers: Http.IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : String(v)]))

export const failingFirstReceiver = Layer.effect(FailingFirstReceiver, Effect.acquireRelease(
  Effect.callback<{ url: string; received: Array<Delivered>; failFirst: { n: number }; server: Http.Server }>((resume) => {
    const received: Array<Delivered> = []
    const failFirst = { n: 0 }
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const answered = received.length < failFirst.n ? 500 : 200
        received.push({ method: req.method ?? "", path: req.url ?? "", headers: flat(req.headers), body: Buffer.concat(chunks), answered })
        res.writeHead(answered).end()
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, failFirst, server })))
  }),
  ({ server }) => Effect.callback<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
))

/** The outbox's delivery worker with the real senders, polling every 50 ms and backing off from 50 ms to `backoffMaxMs`. */
export const fastDeliveryWorker = (backoffMaxMs: number) =>
  Deliverer.layer.pipe(
    Layer.provide(Layer.mergeAll(
      Outbox.layer.pipe(Layer.provide(SecretBox.layer)),
      Layer.succeed(Deliverer.Senders, makeSenders({})),
      Wakeup.layer
    )),
    Layer.provide(withConfig({
      DATA_DIR: "/tmp/statusgrid-api-test",
      NOTIFIER_POLL_MS: "50",
      NOTIFIER_BACKOFF_BASE_MS: "50",
      NOTIFIER_BACKOFF_MAX_MS: String(backoffMaxMs)
    }))
  )
