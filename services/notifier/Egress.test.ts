import { createECDH, randomBytes } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import webPush from "web-push"
import { testPayload } from "../domain/Channel.ts"
import { guardedAgent } from "./Egress.ts"
import type { Destination, Message } from "./Sender.ts"
import { makeSenders } from "./senders.ts"

let server: Http.Server
let port = 0
const received: Array<string> = []

beforeAll(async () => {
  server = Http.createServer((req, res) => {
    received.push(req.url ?? "")
    req.resume()
    req.on("end", () => res.writeHead(202).end("{}"))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const payload = testPayload(new Date("2026-01-01T00:00:00Z"))
const message: Message = { event: "test", title: "t", text: "x", url: "https://status.example.com", level: "info", payload }
const context = { idempotencyKey: "k1", timeoutMs: 2000 }
const senders = makeSenders({ userDispatcher: guardedAgent(), pagerdutyEventsUrl: "" })

describe("the address guard of organization-chosen URLs", () => {
  it("refuses a webhook to a loopback address, named by IP or by a host name, as a final error; nothing is sent", async () => {
    for (const host of ["127.0.0.1", "localhost"]) {
      const destination = { type: "webhook", name: "w", settings: { url: `http://${host}:${port}/hook-${host}` } } as Destination
      const result = await senders.webhook(destination, message, context)
      expect(result.ok).toBe(false)
      expect(result.retryable).toBe(false)
      expect(result.error).toMatch(/loopback address; notifications go only to public addresses unless NOTIFIER_ALLOW_PRIVATE is set/)
    }
    expect(received.filter((u) => u.startsWith("/hook-"))).toEqual([])
  })

  it("refuses a Web Push endpoint on a loopback address as a final error; nothing is sent", async () => {
    const ecdh = createECDH("prime256v1")
    ecdh.generateKeys()
    const push = makeSenders({ userDispatcher: guardedAgent(), vapid: { ...webPush.generateVAPIDKeys(), subject: "mailto:ops@example.com" } })
    const keys = { p256dh: ecdh.getPublicKey().toString("base64url"), auth: randomBytes(16).toString("base64url") }
    const destination = { type: "webpush", name: "phone", settings: { endpoint: `https://localhost:${port}/push-1`, keys } } as Destination
    const result = await push.webpush(destination, message, context)
    expect(result.ok).toBe(false)
    expect(result.retryable).toBe(false)
    expect(result.error).toMatch(/loopback address; notifications go only to public addresses/)
    expect(received.filter((u) => u.startsWith("/push-"))).toEqual([])
  })

  it("leaves the operator's endpoints (PagerDuty, Twilio) on the ordinary pool", async () => {
    const pagerduty = makeSenders({ userDispatcher: guardedAgent(), pagerdutyEventsUrl: `http://127.0.0.1:${port}/pd` })
    const destination = { type: "pagerduty", name: "p", settings: { routing_key: "R0123456789abcdef0123456789abcde" } } as Destination
    const result = await pagerduty.pagerduty(destination, message, context)
    expect(result.error).toBe("")
    expect(result.ok).toBe(true)
    expect(received).toContain("/pd")
  })
})
