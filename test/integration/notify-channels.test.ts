import * as Fs from "node:fs"
import { createServer as createHttpServer } from "node:http"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import type { SMTPServerOptions } from "smtp-server"
import { Agent } from "undici"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ChannelType } from "../../services/domain/Channel.ts"
import { sampleMessage } from "../../services/notifier/channels/sample.ts"
import type { Destination, Message, SendContext } from "../../services/notifier/Sender.ts"
import { postJson, sendHttp } from "../../services/notifier/channels/http.ts"
import { makeSenders } from "../../services/notifier/senders.ts"
import { makeTestCerts } from "../support/tls.ts"
import type { TestCerts } from "../support/tls.ts"
import { decodeWords, mailHeaders, mailPart, startSmtpReceiver } from "../support/receivers.ts"

/**
 * Every channel sender against real local stand-ins (HTTPS for the chat
 * webhooks, whose settings only allow https; a real SMTP server), checking
 * the wire formats of the real services and how failures are reported.
 */

interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

type Reply = (req: Received, res: ServerResponse) => void

interface Receiver {
  readonly url: string
  readonly requests: Array<Received>
  reply: Reply
  readonly close: () => Promise<void>
}

const startReceiver = async (certs?: TestCerts): Promise<Receiver> => {
  const requests: Array<Received> = []
  const receiver = {
    url: "",
    requests,
    reply: ((_req, res) => res.writeHead(200).end("ok")) as Reply,
    close: async () => {}
  }
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const received = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) }
      requests.push(received)
      receiver.reply(received, res)
    })
  }
  const server = certs === undefined ? createHttpServer(handle) : createHttpsServer({ cert: certs.cert, key: certs.key }, handle)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  receiver.url = `${certs === undefined ? "http" : "https"}://127.0.0.1:${(server.address() as AddressInfo).port}`
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return receiver
}

/** The SMTP stand-in of test/support/receivers.ts, with its settings overridden per test. */
const startSmtp = (options: Partial<SMTPServerOptions> = {}) => startSmtpReceiver(undefined, options)

const json = (r: Received): Record<string, unknown> => JSON.parse(r.body.toString("utf8")) as Record<string, unknown>

const destination = <T extends ChannelType>(type: T, settings: Record<string, unknown>): Destination<T> =>
  ({ type, name: `${type} test`, settings: settings as Destination["settings"] })

const context = (idempotencyKey = "delivery-42", timeoutMs = 5000): SendContext => ({ idempotencyKey, timeoutMs })

const message: Message = sampleMessage()
const secret = "whsec-test-secret-0123456789abcdef"
const accountSid = `AC${"0123456789abcdef".repeat(2)}`
const routingKey = "R0123456789abcdefABCDEF012345678"

let certs: TestCerts
let chat: Receiver // HTTPS: Slack, Discord, Teams
let plain: Receiver // HTTP: webhook, Twilio, PagerDuty
let smtp: Awaited<ReturnType<typeof startSmtp>>
let dispatcher: Agent
let senders: ReturnType<typeof makeSenders>

beforeAll(async () => {
  certs = makeTestCerts()
  chat = await startReceiver(certs)
  plain = await startReceiver()
  smtp = await startSmtp()
  dispatcher = new Agent({ connect: { ca: certs.ca } })
  senders = makeSenders({
    dispatcher,
    twilioApiUrl: `${plain.url}/twilio`,
    pagerdutyEventsUrl: `${plain.url}/pagerduty/v2/enqueue`,
    smtpUrl: `smtp://127.0.0.1:${smtp.port}`,
    smtpFrom: "statusgrid <alerts@status.example.com>"
  })
})

afterAll(async () => {
  await Promise.all([chat?.close(), plain?.close(), smtp?.close(), dispatcher?.close()])
  certs?.remove()
})

/** The receiver-side recipe of the project's README, loaded from the README itself. */
const loadReadmeVerifier = async (): Promise<(rawBody: Buffer, headers: IncomingHttpHeaders, secret: string) => boolean> => {
  const readme = Fs.readFileSync(Path.join(import.meta.dirname, "../../README.md"), "utf8")
  const code = /### Verifying webhooks[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1]
  expect(code, "README has the verification snippet").toBeDefined()
  const file = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "sg-readme-")), "verify.mjs")
  Fs.writeFileSync(file, `${code}\nexport { verify }\n`)
  const mod = (await import(pathToFileURL(file).href)) as { verify: (b: Buffer, h: IncomingHttpHeaders, s: string) => boolean }
  Fs.rmSync(Path.dirname(file), { recursive: true, force: true })
  return mod.verify
}

describe("webhook", () => {
  it("POSTs the payload signed as the README says, with id, timestamp, idempotency and custom headers", async () => {
    const verify = await loadReadmeVerifier()
    plain.reply = (_req, res) => res.writeHead(204).end()
    const settings = {
      url: `${plain.url}/hooks/in?team=ops`,
      signing_secret: secret,
      headers: { Authorization: "Bearer abc", "X-Team": "ops", "Webhook-Id": "spoofed", "idempotency-key": "spoofed" }
    }
    const before = Math.floor(Date.now() / 1000)
    const result = await senders.webhook(destination("webhook", settings), message, context())
    expect(result).toEqual({ ok: true, status: 204, retryable: false, error: "" })

    const req = plain.requests.at(-1)!
    expect(req.method).toBe("POST")
    expect(req.path).toBe("/hooks/in?team=ops")
    expect(req.body.toString()).toBe(JSON.stringify(message.payload))
    expect(json(req)).toEqual(message.payload)
    expect(req.headers["content-type"]).toBe("application/json")
    expect(req.headers["webhook-id"]).toBe("delivery-42")
    expect(req.headers["idempotency-key"]).toBe("delivery-42")
    expect(req.headers.authorization).toBe("Bearer abc")
    expect(req.headers["x-team"]).toBe("ops")
    expect(Number(req.headers["webhook-timestamp"])).toBeGreaterThanOrEqual(before)
    expect(Number(req.headers["webhook-timestamp"])).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))
    expect(req.headers["x-service-signature"]).toMatch(/^[0-9a-f]{64}$/)
    expect(req.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)

    expect(verify(req.body, req.headers, secret)).toBe(true)
    // The recipe rejects a changed body, the wrong secret, a replay with a forged timestamp, and an old delivery.
    expect(verify(Buffer.from(req.body.toString().replace("critical", "operational")), req.headers, secret)).toBe(false)
    expect(verify(req.body, req.headers, "another-secret-0123456789")).toBe(false)
    expect(verify(req.body, { ...req.headers, "webhook-timestamp": String(Math.floor(Date.now() / 1000) + 5) }, secret)).toBe(false)
    const replayedLater = (await import("../../services/notifier/signature.ts")).signatureHeaders(secret, "delivery-42", before - 600, req.body)
    expect(verify(req.body, { ...req.headers, ...replayedLater, "webhook-timestamp": String(before - 600) }, secret)).toBe(false)
  })

  it("keeps webhook-id across attempts so the receiver can drop the copy", async () => {
    plain.reply = (_req, res) => res.writeHead(200).end()
    const d = destination("webhook", { url: `${plain.url}/dup`, signing_secret: secret })
    await senders.webhook(d, message, context("delivery-7"))
    await senders.webhook(d, message, context("delivery-7"))
    const ids = plain.requests.filter((r) => r.path === "/dup").map((r) => r.headers["webhook-id"])
    expect(ids).toEqual(["delivery-7", "delivery-7"])
  })

  it("sends PUT with the body, and GET and DELETE with no body, signed over the empty string", async () => {
    const verify = await loadReadmeVerifier()
    plain.reply = (_req, res) => res.writeHead(200).end()
    for (const method of ["PUT", "GET", "DELETE"] as const) {
      expect(await senders.webhook(destination("webhook", { url: `${plain.url}/m`, method, signing_secret: secret }), message, context())).toMatchObject({ ok: true })
      const req = plain.requests.at(-1)!
      expect(req.method).toBe(method)
      expect(req.body.toString()).toBe(method === "PUT" ? JSON.stringify(message.payload) : "")
      expect(req.headers["content-type"]).toBe(method === "PUT" ? "application/json" : undefined)
      expect(verify(req.body, req.headers, secret)).toBe(true)
    }
  })
})

describe("Slack", () => {
  it("posts Block Kit with mentions, username, emoji and channel", async () => {
    chat.reply = (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("ok")
    const settings = {
      channel: "#ops",
      webhook_url: `${chat.url}/services/T000/B000/XXXX`,
      mention_users: ["U012AB3CD", "@W0456"],
      channel_mentions: "here",
      username: "statusgrid",
      icon_emoji: ":rotating_light:",
      thread_replies: true
    }
    const result = await senders.slack(destination("slack", settings), { ...message, text: "API <b> & co is critical." }, context())
    expect(result).toEqual({ ok: true, status: 200, retryable: false, error: "" })
    const req = chat.requests.at(-1)!
    expect(req.path).toBe("/services/T000/B000/XXXX")
    expect(req.headers["content-type"]).toBe("application/json")
    expect(json(req)).toEqual({
      text: message.title,
      blocks: [
        { type: "header", text: { type: "plain_text", text: message.title, emoji: true } },
        { type: "section", text: { type: "mrkdwn", text: "<@U012AB3CD> <@W0456> <!here>\nAPI &lt;b&gt; &amp; co is critical." } },
        { type: "context", elements: [{ type: "mrkdwn", text: `<${message.url}|View details> · Payments · component.status_changed` }] }
      ],
      channel: "#ops",
      username: "statusgrid",
      icon_emoji: ":rotating_light:"
    })
  })

  it("reports Slack's 4xx answers as final and 5xx as retryable", async () => {
    const d = destination("slack", { channel: "#ops", webhook_url: `${chat.url}/services/T/B/Y` })
    chat.reply = (_req, res) => res.writeHead(404).end("no_service")
    expect(await senders.slack(d, message, context())).toEqual({ ok: false, status: 404, retryable: false, error: "HTTP 404: no_service" })
    chat.reply = (_req, res) => res.writeHead(503).end()
    expect(await senders.slack(d, message, context())).toEqual({ ok: false, status: 503, retryable: true, error: "HTTP 503" })
  })
})

describe("Discord", () => {
  it("posts an embed with the colour, fields and role mentions limited to those roles", async () => {
    chat.reply = (_req, res) => res.writeHead(204).end()
    const settings = { webhook_url: `${chat.url}/api/webhooks/123/tok`, mention_roles: ["111", "<@&222>"], embed_color: "#ff0000" }
    expect(await senders.discord(destination("discord", settings), message, context())).toMatchObject({ ok: true, status: 204 })
    const body = json(chat.requests.at(-1)!)
    expect(body).toEqual({
      content: "<@&111> <@&222>",
      embeds: [{
        title: message.title,
        description: message.text,
        url: message.url,
        color: 0xff0000,
        timestamp: message.payload.timestamp,
        fields: [
          { name: "Component", value: "API", inline: true },
          { name: "Stack", value: "Payments", inline: true },
          { name: "Status", value: "operational → critical", inline: true }
        ]
      }],
      allowed_mentions: { parse: [], roles: ["111", "222"] }
    })
  })

  it("honours Discord's rate limit answer (429, Retry-After in seconds)", async () => {
    chat.reply = (_req, res) => res.writeHead(429, { "retry-after": "2", "content-type": "application/json" }).end("{\"retry_after\":1.5}")
    const r = await senders.discord(destination("discord", { webhook_url: `${chat.url}/api/webhooks/1/t` }), message, context())
    expect(r).toMatchObject({ ok: false, status: 429, retryable: true, retryAfterMs: 2000 })
  })
})

describe("Teams", () => {
  it("posts an Adaptive Card 1.4 in a message envelope", async () => {
    chat.reply = (_req, res) => res.writeHead(202).end()
    const settings = { webhook_url: `${chat.url}/workflows/abc`, card_title: "Ops alerts", card_style: "attention" }
    expect(await senders.teams(destination("teams", settings), message, context())).toMatchObject({ ok: true, status: 202 })
    const body = json(chat.requests.at(-1)!)
    expect(body.type).toBe("message")
    const attachments = body.attachments as Array<Record<string, unknown>>
    expect(attachments).toHaveLength(1)
    expect(attachments[0]!.contentType).toBe("application/vnd.microsoft.card.adaptive")
    const card = attachments[0]!.content as Record<string, unknown>
    expect(card).toMatchObject({ $schema: "http://adaptivecards.io/schemas/adaptive-card.json", type: "AdaptiveCard", version: "1.4" })
    expect(card.body).toEqual([
      {
        type: "Container",
        style: "attention",
        bleed: true,
        items: [
          { type: "TextBlock", text: "Ops alerts", size: "Medium", weight: "Bolder", wrap: true },
          { type: "TextBlock", text: message.title, weight: "Bolder", wrap: true }
        ]
      },
      { type: "TextBlock", text: message.text, wrap: true },
      {
        type: "FactSet",
        facts: [
          { title: "Component", value: "API" },
          { title: "Stack", value: "Payments" },
          { title: "Status", value: "operational → critical" },
          { title: "Event", value: "component.status_changed" }
        ]
      }
    ])
    expect(card.actions).toEqual([{ type: "Action.OpenUrl", title: "View details", url: message.url }])
  })

  it("posts a MessageCard when adaptive cards are off", async () => {
    chat.reply = (_req, res) => res.writeHead(200).end("1")
    const settings = { webhook_url: `${chat.url}/webhookb2/abc`, adaptive_cards: false }
    expect(await senders.teams(destination("teams", settings), message, context())).toMatchObject({ ok: true })
    expect(json(chat.requests.at(-1)!)).toMatchObject({
      "@type": "MessageCard",
      "@context": "https://schema.org/extensions",
      themeColor: "D13438",
      title: "statusgrid",
      text: message.title,
      potentialAction: [{ "@type": "OpenUri", name: "View details", targets: [{ os: "default", uri: message.url }] }]
    })
  })
})

describe("SMS (Twilio)", () => {
  const twilioSettings = {
    phone_numbers: ["+14155550100", "+442071838750"],
    account_sid: accountSid,
    auth_token: "token-0123456789",
    from_number: "+15005550006"
  }
  const long = sampleMessage({ text: "A very long explanation of what happened. ".repeat(10), url: "https://sg.example.com/i/Ab3dE" })

  it("posts one form-encoded message per number, authenticated, each body ≤ 160 with the link whole", async () => {
    plain.reply = (req, res) =>
      res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ sid: `SM${"0".repeat(32)}`, to: new URLSearchParams(req.body.toString()).get("To"), status: "queued" }))
    const start = plain.requests.length
    expect(await senders.sms(destination("sms", twilioSettings), long, context("d-9"))).toEqual({ ok: true, status: 201, retryable: false, error: "" })
    const reqs = plain.requests.slice(start)
    expect(reqs).toHaveLength(2)
    for (const req of reqs) {
      expect(req.method).toBe("POST")
      expect(req.path).toBe(`/twilio/2010-04-01/Accounts/${accountSid}/Messages.json`)
      expect(req.headers["content-type"]).toBe("application/x-www-form-urlencoded")
      expect(req.headers.authorization).toBe(`Basic ${Buffer.from(`${accountSid}:token-0123456789`).toString("base64")}`)
      const form = new URLSearchParams(req.body.toString())
      expect(form.get("From")).toBe("+15005550006")
      const body = form.get("Body")!
      expect([...body].length).toBeLessThanOrEqual(160)
      expect(body.endsWith(" https://sg.example.com/i/Ab3dE")).toBe(true)
      expect(body).toContain("… https://sg.example.com/i/Ab3dE")
      expect(body.startsWith(long.title)).toBe(true)
      expect(req.headers["i-twilio-idempotency-token"]).toBe(`d-9:${form.get("To")}`)
    }
    expect(reqs.map((r) => new URLSearchParams(r.body.toString()).get("To")).toSorted()).toEqual(["+14155550100", "+442071838750"])
  })

  it("honours max_length", async () => {
    plain.reply = (_req, res) => res.writeHead(201).end("{}")
    await senders.sms(destination("sms", { ...twilioSettings, phone_numbers: ["+14155550100"], max_length: 70 }), long, context())
    const body = new URLSearchParams(plain.requests.at(-1)!.body.toString()).get("Body")!
    expect([...body].length).toBeLessThanOrEqual(70)
    expect(body.endsWith(" https://sg.example.com/i/Ab3dE")).toBe(true)
  })

  it("fails when one number fails: final for a 400, retryable when any failure is", async () => {
    const d = destination("sms", twilioSettings)
    plain.reply = (req, res) =>
      new URLSearchParams(req.body.toString()).get("To") === "+442071838750"
        ? res.writeHead(400, { "content-type": "application/json" }).end("{\"code\":21211,\"message\":\"Invalid 'To' Phone Number\"}")
        : res.writeHead(201).end("{}")
    const bad = await senders.sms(d, message, context())
    expect(bad).toMatchObject({ ok: false, status: 400, retryable: false })
    expect(bad.error).toContain("+442071838750: HTTP 400")
    expect(bad.error).not.toContain("+14155550100")

    plain.reply = (req, res) =>
      new URLSearchParams(req.body.toString()).get("To") === "+442071838750" ? res.writeHead(503, { "retry-after": "7" }).end() : res.writeHead(201).end("{}")
    expect(await senders.sms(d, message, context())).toMatchObject({ ok: false, status: 503, retryable: true, retryAfterMs: 7000 })
  })
})

describe("PagerDuty", () => {
  it("triggers with the routing key, dedup key, mapped severity and details; 202 is success", async () => {
    plain.reply = (_req, res) =>
      res.writeHead(202, { "content-type": "application/json" }).end("{\"status\":\"success\",\"message\":\"Event processed\",\"dedup_key\":\"x\"}")
    const settings = { routing_key: routingKey, severity_map: { critical: "error", degraded: "warning", info: "info" } }
    expect(await senders.pagerduty(destination("pagerduty", settings), message, context())).toEqual({ ok: true, status: 202, retryable: false, error: "" })
    const req = plain.requests.at(-1)!
    expect(req.path).toBe("/pagerduty/v2/enqueue")
    expect(json(req)).toEqual({
      routing_key: routingKey,
      event_action: "trigger",
      dedup_key: "statusgrid:component:comp-1",
      payload: {
        summary: message.title,
        source: "statusgrid",
        severity: "error",
        timestamp: message.payload.timestamp,
        component: "API",
        group: "Payments",
        class: "component.status_changed",
        custom_details: message.payload
      },
      client: "statusgrid",
      client_url: message.url,
      links: [{ href: message.url, text: "View in statusgrid" }]
    })
  })

  it("resolves the same alert when the component recovers", async () => {
    plain.reply = (_req, res) => res.writeHead(202).end("{\"status\":\"success\"}")
    const recovered = sampleMessage({
      level: "info",
      payload: { ...message.payload, component: { ...message.payload.component, previous_status: "critical", current_status: "operational" } }
    })
    expect(await senders.pagerduty(destination("pagerduty", { routing_key: routingKey }), recovered, context())).toMatchObject({ ok: true })
    expect(json(plain.requests.at(-1)!)).toEqual({ routing_key: routingKey, event_action: "resolve", dedup_key: "statusgrid:component:comp-1" })
  })

  it("reports an invalid event (400) as final", async () => {
    plain.reply = (_req, res) => res.writeHead(400).end("{\"status\":\"invalid event\",\"message\":\"Event object is invalid\"}")
    expect(await senders.pagerduty(destination("pagerduty", { routing_key: routingKey }), message, context()))
      .toMatchObject({ ok: false, status: 400, retryable: false })
  })
})

describe("e-mail (SMTP)", () => {
  const emailSettings = {
    recipients: ["oncall@example.com", "cto@example.com"],
    subject_template: "[{stack_name}] {component_name}: {previous_status} → {current_status} {status_emoji}"
  }

  it("mails every recipient with the rendered subject, text and HTML bodies and the idempotency headers", async () => {
    const start = smtp.mails.length
    const result = await senders.email(destination("email", emailSettings), message, context("delivery-42"))
    expect(result).toMatchObject({ ok: true, status: 250, retryable: false, error: "" })
    const mail = smtp.mails[start]!
    expect(mail.from).toBe("alerts@status.example.com")
    expect(mail.to).toEqual(["oncall@example.com", "cto@example.com"])
    const headers = mailHeaders(mail.raw)
    expect(decodeWords(headers.get("subject")!)).toBe("[Payments] API: operational → critical 🔴")
    expect(headers.get("message-id")).toBe("<delivery-42@status.example.com>")
    expect(headers.get("x-idempotency-key")).toBe("delivery-42")
    expect(headers.get("content-type")).toMatch(/^multipart\/alternative/)
    const text = mailPart(mail.raw, "text/plain")
    expect(text).toContain(message.title)
    expect(text).toContain("payments may fail.")
    expect(text).toContain("API (Payments): operational → critical")
    expect(text).toContain(`Details: ${message.url}`)
    const html = mailPart(mail.raw, "text/html")
    expect(html).toContain(`<a href="${message.url}"`)
    expect(html).toContain("API (Payments): operational → critical")
  })

  it("leaves the component line out when include_components is false, and uses the title without a template", async () => {
    const start = smtp.mails.length
    await senders.email(destination("email", { recipients: "ops@example.com", include_components: false }), message, context("k:1/2"))
    const mail = smtp.mails[start]!
    expect(decodeWords(mailHeaders(mail.raw).get("subject")!)).toBe(message.title)
    expect(mailPart(mail.raw, "text/plain")).not.toContain("API (Payments)")
    // A key that is not a valid local part still gives a stable, valid Message-ID.
    expect(mailHeaders(mail.raw).get("message-id")).toMatch(/^<[0-9a-f]{40}@status\.example\.com>$/)
  })

  it("authenticates with the credentials of SMTP_URL", async () => {
    const authed = await startSmtp({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === "mailer" && auth.password === "p@ss word") callback(null, { user: auth.username })
        else callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }))
      }
    })
    try {
      const ok = makeSenders({ smtpUrl: `smtp://mailer:${encodeURIComponent("p@ss word")}@127.0.0.1:${authed.port}`, smtpFrom: "alerts@example.com" })
      expect(await ok.email(destination("email", emailSettings), message, context())).toMatchObject({ ok: true })
      expect(authed.mails.at(-1)!.user).toBe("mailer")
      const wrong = makeSenders({ smtpUrl: `smtp://mailer:nope@127.0.0.1:${authed.port}`, smtpFrom: "alerts@example.com" })
      expect(await wrong.email(destination("email", emailSettings), message, context())).toMatchObject({ ok: false, status: 535, retryable: false })
    } finally {
      await authed.close()
    }
  })

  it("retries a 4xx reply, not a 5xx one, and retries when the server is unreachable", async () => {
    let code = 451
    const picky = await startSmtp({
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error(code === 451 ? "Try again later" : "No such user"), { responseCode: code }))
      }
    })
    try {
      const s = makeSenders({ smtpUrl: `smtp://127.0.0.1:${picky.port}`, smtpFrom: "alerts@example.com" })
      const soft = await s.email(destination("email", emailSettings), message, context())
      expect(soft).toMatchObject({ ok: false, status: 451, retryable: true })
      code = 550
      const hard = await s.email(destination("email", emailSettings), message, context())
      expect(hard).toMatchObject({ ok: false, status: 550, retryable: false })
      expect(hard.error).toContain("No such user")
    } finally {
      await picky.close()
    }
    const gone = makeSenders({ smtpUrl: `smtp://127.0.0.1:${picky.port}`, smtpFrom: "alerts@example.com" })
    const refused = await gone.email(destination("email", emailSettings), message, context())
    expect(refused).toMatchObject({ ok: false, status: 0, retryable: true })
    expect(refused.error).toMatch(/ECONNREFUSED|ECONNECTION|ESOCKET/)
  })

  it("gives up at the attempt's deadline when the server stops answering: retryable", async () => {
    // Accepts the connection and the envelope, then never answers the message data.
    const stuck = await startSmtp({ closeTimeout: 100, onData: (stream) => void stream.resume() })
    try {
      const s = makeSenders({ smtpUrl: `smtp://127.0.0.1:${stuck.port}`, smtpFrom: "alerts@example.com" })
      const started = Date.now()
      const r = await s.email(destination("email", emailSettings), message, context("d", 500))
      expect(r).toEqual({ ok: false, status: 0, retryable: true, error: "timeout after 500 ms" })
      expect(Date.now() - started).toBeLessThan(3000)
    } finally {
      await stuck.close()
    }
  })

  it("fails without retry when SMTP is not configured", async () => {
    expect(await makeSenders().email(destination("email", emailSettings), message, context()))
      .toEqual({ ok: false, status: 0, retryable: false, error: "e-mail is not configured: set SMTP_URL and SMTP_FROM" })
  })
})

const hook = (path: string) => destination("webhook", { url: `${plain.url}${path}`, signing_secret: secret })

describe("failure mapping", () => {

  it("500 → retryable, 429 with Retry-After: 2 → 2000 ms, 400 → final", async () => {
    plain.reply = (req, res) => {
      if (req.path === "/500") res.writeHead(500).end("internal error")
      else if (req.path === "/429") res.writeHead(429, { "retry-after": "2" }).end()
      else res.writeHead(400).end("{\"error\":\"bad\"}")
    }
    expect(await senders.webhook(hook("/500"), message, context())).toEqual({ ok: false, status: 500, retryable: true, error: "HTTP 500: internal error" })
    expect(await senders.webhook(hook("/429"), message, context())).toEqual({ ok: false, status: 429, retryable: true, retryAfterMs: 2000, error: "HTTP 429" })
    expect(await senders.webhook(hook("/400"), message, context())).toEqual({ ok: false, status: 400, retryable: false, error: "HTTP 400: {\"error\":\"bad\"}" })
  })

  it("a Retry-After date is converted to milliseconds from now", async () => {
    const fixedNow = Date.parse("2026-03-01T10:00:00Z")
    const s = makeSenders({ now: () => fixedNow })
    plain.reply = (_req, res) => res.writeHead(503, { "retry-after": "Sun, 01 Mar 2026 10:01:30 GMT" }).end()
    expect(await s.webhook(hook("/503"), message, context())).toMatchObject({ status: 503, retryable: true, retryAfterMs: 90_000 })
  })

  it("connection refused → retryable", async () => {
    const gone = await startReceiver()
    await gone.close()
    const r = await senders.webhook(destination("webhook", { url: `${gone.url}/x`, signing_secret: secret }), message, context())
    expect(r).toMatchObject({ ok: false, status: 0, retryable: true })
    expect(r.error).toContain("ECONNREFUSED")
  })

  it("timeout → retryable, within the attempt's deadline", async () => {
    plain.reply = () => {} // never answers
    const started = Date.now()
    const r = await senders.webhook(hook("/slow"), message, context("d", 400))
    expect(r).toEqual({ ok: false, status: 0, retryable: true, error: "timeout after 400 ms" })
    expect(Date.now() - started).toBeLessThan(3000)
  })

  it("an untrusted certificate → retryable TLS error", async () => {
    const r = await makeSenders().slack(destination("slack", { channel: "#ops", webhook_url: `${chat.url}/services/T/B/Z` }), message, context())
    expect(r).toMatchObject({ ok: false, status: 0, retryable: true })
  })

  it("invalid settings → final, without echoing secrets", async () => {
    const r = await senders.slack(destination("slack", { channel: "#ops", webhook_url: "http://hooks.slack.test/services/T/B/SECRETPART" }), message, context())
    expect(r).toMatchObject({ ok: false, status: 0, retryable: false })
    expect(r.error).toContain("webhook_url")
    expect(r.error).not.toContain("SECRETPART")
    const wrongType = await senders.slack(destination("discord", { webhook_url: `${chat.url}/x` }), message, context())
    expect(wrongType).toMatchObject({ ok: false, retryable: false, error: "a discord destination given to the slack sender" })
  })
})

describe("sendHttp (channels/http.ts) against a local server", () => {
  const seen: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = []
  const server = createHttpServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString() })
      if (req.url === "/ok") res.writeHead(200).end("ok")
      else if (req.url === "/big") res.writeHead(200).end("x".repeat(1 << 20))
      else if (req.url === "/busy") res.writeHead(429, { "retry-after": "2" }).end("rate limited")
      else if (req.url === "/broken") res.writeHead(500).end("boom")
      else if (req.url === "/bad") res.writeHead(400).end("invalid_payload")
      else if (req.url === "/moved") res.writeHead(302, { location: "/ok" }).end()
      // /hang: never answers
    })
  })
  let base = ""
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => {
    server.closeAllConnections()
    server.close()
  })
  const context = { idempotencyKey: "k", timeoutMs: 2000 }

  it("posts JSON with a user agent and reads the status", async () => {
    const r = await postJson(`${base}/ok`, { a: 1 }, context, {}, { "x-extra": "1" })
    expect(r).toEqual({ ok: true, status: 200, retryable: false, error: "" })
    const req = seen.at(-1)!
    expect(req).toMatchObject({ method: "POST", body: "{\"a\":1}" })
    expect(req.headers["content-type"]).toBe("application/json")
    expect(req.headers["x-extra"]).toBe("1")
    expect(String(req.headers["user-agent"])).toMatch(/^statusgrid\//)
  })

  it("maps 429, 500, 400 and redirects, without following them", async () => {
    const [busy, broken, bad, moved] = await Promise.all(["/busy", "/broken", "/bad", "/moved"].map((p) => postJson(`${base}${p}`, {}, context)))
    expect(busy).toEqual({ ok: false, status: 429, retryable: true, retryAfterMs: 2000, error: "HTTP 429: rate limited" })
    expect(broken).toEqual({ ok: false, status: 500, retryable: true, error: "HTTP 500: boom" })
    expect(bad).toEqual({ ok: false, status: 400, retryable: false, error: "HTTP 400: invalid_payload" })
    expect(moved).toMatchObject({ ok: false, status: 302, retryable: false })
    expect(seen.filter((s) => s.url === "/ok")).toHaveLength(1)
  })

  it("is ok with a large 2xx answer", async () => {
    expect(await postJson(`${base}/big`, {}, context)).toMatchObject({ ok: true, status: 200 })
  })

  it("times out a request that gets no answer: retryable, status 0", async () => {
    const started = Date.now()
    const r = await sendHttp({ url: `${base}/hang`, method: "POST", headers: {}, body: "{}", timeoutMs: 300 })
    expect(r).toEqual({ ok: false, status: 0, retryable: true, error: "timeout after 300 ms" })
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it("reports a refused connection as retryable", async () => {
    const closed = createHttpServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const r = await postJson(`http://127.0.0.1:${port}/`, {}, context)
    expect(r).toMatchObject({ ok: false, status: 0, retryable: true })
    expect(r.error).toContain("ECONNREFUSED")
  })

  it("refuses invalid URLs and other schemes without retry", async () => {
    expect(await postJson("not a url", {}, context)).toEqual({ ok: false, status: 0, retryable: false, error: "invalid URL" })
    expect(await postJson("ftp://example.com/", {}, context)).toMatchObject({ ok: false, retryable: false, error: "unsupported URL scheme ftp:" })
  })

  it("sends no body and no content type for a GET", async () => {
    expect(await sendHttp({ url: `${base}/ok`, method: "GET", headers: {}, timeoutMs: 1000 })).toMatchObject({ ok: true })
    const req = seen.at(-1)!
    expect(req).toMatchObject({ method: "GET", body: "" })
    expect(req.headers["content-type"]).toBeUndefined()
    expect(req.headers["content-length"]).toBeUndefined()
  })
})
