import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { createServer as createHttpServer } from "node:http"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { SMTPServer, type SMTPServerOptions } from "smtp-server"
import type { TestCerts } from "./tls.ts"

/**
 * Local stand-ins for the services the notifier delivers to. Each one checks
 * a request as the real service would (path, authentication, the fields it
 * requires) and answers as it does: its success status, or its error status
 * with the problem, which is also kept in `problems`.
 */

/** One request as received: the body's raw bytes, as signatures are computed over them. */
export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

export interface Answer {
  readonly status: number
  readonly body?: string
  readonly headers?: Readonly<Record<string, string>>
}

export interface HttpReceiver {
  /** Origin, e.g. `https://127.0.0.1:40123`. */
  readonly url: string
  /** Every request, in arrival order (those refused too). */
  readonly requests: Array<Received>
  /** Why requests were refused, one entry per refused request. */
  readonly problems: Array<string>
  readonly close: () => Promise<void>
}

/** What a stand-in does with one request: its answer, and the problem when it refuses it. */
export type Handler = (req: Received) => Answer & { readonly problem?: string }

/** An HTTP (or, with `certs`, HTTPS) server on 127.0.0.1 answering with `handler`. */
export const startHttpReceiver = async (handler: Handler, certs?: TestCerts): Promise<HttpReceiver> => {
  const requests: Array<Received> = []
  const problems: Array<string> = []
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const received = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) }
      requests.push(received)
      const answer = handler(received)
      if (answer.problem !== undefined) problems.push(answer.problem)
      res.writeHead(answer.status, answer.headers).end(answer.body ?? "")
    })
  }
  const server = certs === undefined ? createHttpServer(handle) : createHttpsServer({ cert: certs.cert, key: certs.key }, handle)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `${certs === undefined ? "http" : "https"}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    problems,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const parseJson = (req: Received): Json | undefined => {
  try {
    const value: unknown = JSON.parse(req.body.toString("utf8"))
    return isObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** The first problem found, or undefined; each check is `[holds, problem]`. */
const firstProblem = (checks: ReadonlyArray<readonly [boolean, string]>): string | undefined => checks.find(([holds]) => !holds)?.[1]

const isJsonPost = (req: Received) => req.method === "POST" && String(req.headers["content-type"]).startsWith("application/json")

const nonEmptyText = (value: unknown, max: number) => typeof value === "string" && value.trim() !== "" && [...value].length <= max

// ---------------------------------------------------------------------------
// Webhook: the customer's endpoint, verifying both signatures (services/notifier/README.md).

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** The problem with a webhook request's signatures under `secret`, computed independently of the sender's code. */
export const webhookSignatureProblem = (req: Received, secret: string, nowMs = Date.now()): string | undefined => {
  const id = String(req.headers["webhook-id"] ?? "")
  const ts = String(req.headers["webhook-timestamp"] ?? "")
  const hex = createHmac("sha256", secret).update(req.body).digest("hex")
  const v1 = `v1,${createHmac("sha256", secret).update(`${id}.${ts}.`).update(req.body).digest("base64")}`
  return firstProblem([
    [sameText(hex, String(req.headers["x-service-signature"] ?? "")), "X-Service-Signature does not match the body"],
    [id !== "", "webhook-id is missing"],
    [/^\d+$/.test(ts) && Math.abs(nowMs / 1000 - Number(ts)) <= 300, "webhook-timestamp is missing or more than 5 minutes away"],
    [String(req.headers["webhook-signature"] ?? "").split(" ").some((sig) => sameText(v1, sig)), "webhook-signature does not match"]
  ])
}

/** The spec's webhook payload fields a receiver relies on. */
const webhookPayloadProblem = (payload: Json | undefined): string | undefined => {
  const component = payload?.["component"]
  const stack = payload?.["stack"]
  const incident = payload?.["incident"]
  return firstProblem([
    [payload !== undefined, "the body is not a JSON object"],
    [typeof payload?.["event"] === "string" && typeof payload?.["timestamp"] === "string", "event and timestamp are required"],
    [!Number.isNaN(Date.parse(String(payload?.["timestamp"]))), "timestamp is not a date"],
    [isObject(stack) && ["id", "name", "slug"].every((k) => typeof stack[k] === "string"), "stack needs id, name and slug"],
    [isObject(component) && ["id", "name", "previous_status", "current_status"].every((k) => typeof component[k] === "string"),
      "component needs id, name, previous_status and current_status"],
    [isObject(incident) && typeof incident["id"] === "string", "incident needs an id"]
  ])
}

/**
 * A webhook endpoint that accepts only requests signed with one of the
 * trusted secrets (`trust` it once the API has generated it): 401 otherwise,
 * 400 for a payload without the spec's fields, 200 when all is well.
 */
export const webhookHandler = (trusted: ReadonlyArray<string>): Handler => (req) => {
  const unsigned = !isJsonPost(req) ? "expected a JSON POST" : trusted.length === 0 ? "no signing secret to check with" : undefined
  const problems = unsigned === undefined ? trusted.map((secret) => webhookSignatureProblem(req, secret)) : [unsigned]
  const problem = problems.includes(undefined) ? undefined : problems[0]
  if (problem !== undefined) return { status: 401, body: problem, problem }
  const invalid = webhookPayloadProblem(parseJson(req))
  return invalid === undefined ? { status: 200, body: "ok" } : { status: 400, body: invalid, problem: invalid }
}

// ---------------------------------------------------------------------------
// Slack incoming webhooks: `POST /services/T…/B…/…`, text/plain answers ("ok", "invalid_payload", "no_text").

const slackBlockProblem = (blocks: unknown): string | undefined => {
  if (!Array.isArray(blocks)) return "invalid_blocks: blocks must be an array"
  const list = blocks as ReadonlyArray<unknown>
  const header = list.find((b) => isObject(b) && b["type"] === "header")
  const section = list.find((b) => isObject(b) && b["type"] === "section")
  return firstProblem([
    [list.length <= 50 && list.every((b) => isObject(b) && typeof b["type"] === "string"), "invalid_blocks: each block needs a type"],
    [isObject(header) && isObject(header["text"]) && header["text"]["type"] === "plain_text" && nonEmptyText(header["text"]["text"], 150),
      "invalid_blocks: a header needs plain_text of 1 to 150 characters"],
    [isObject(section) && isObject(section["text"]) && ["mrkdwn", "plain_text"].includes(String(section["text"]["type"])) &&
      nonEmptyText(section["text"]["text"], 3000), "invalid_blocks: a section needs text of 1 to 3000 characters"]
  ])
}

export const slackHandler: Handler = (req) => {
  const body = parseJson(req)
  const problem = firstProblem([
    [/^\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]+$/.test(req.path), "no_service"],
    [isJsonPost(req) && body !== undefined, "invalid_payload"],
    [nonEmptyText(body?.["text"], 40_000), "no_text"]
  ]) ?? slackBlockProblem(body?.["blocks"])
  const plain = { "content-type": "text/plain" }
  return problem === undefined
    ? { status: 200, body: "ok", headers: plain }
    : { status: problem === "no_service" ? 404 : 400, body: problem, headers: plain, problem }
}

// ---------------------------------------------------------------------------
// Discord webhooks: `POST /api/webhooks/{id}/{token}`, 204 without `?wait=true`, 400 with a code and message.

const discordEmbedProblem = (embeds: unknown): string | undefined => {
  if (!Array.isArray(embeds) || embeds.length === 0 || embeds.length > 10) return "embeds: 1 to 10 embeds"
  const embed: unknown = embeds[0]
  if (!isObject(embed)) return "embeds.0: must be an object"
  const fields = embed["fields"]
  const color = embed["color"]
  return firstProblem([
    [nonEmptyText(embed["title"], 256), "embeds.0.title: 1 to 256 characters"],
    [embed["description"] === undefined || nonEmptyText(embed["description"], 4096), "embeds.0.description: at most 4096 characters"],
    [Number.isInteger(color) && (color as number) >= 0 && (color as number) <= 0xffffff, "embeds.0.color: an integer from 0 to 16777215"],
    [embed["timestamp"] === undefined || !Number.isNaN(Date.parse(String(embed["timestamp"]))), "embeds.0.timestamp: ISO 8601"],
    [Array.isArray(fields) && fields.length <= 25 && (fields as ReadonlyArray<unknown>).every((f) =>
      isObject(f) && nonEmptyText(f["name"], 256) && nonEmptyText(f["value"], 1024)), "embeds.0.fields: up to 25 with name and value"]
  ])
}

export const discordHandler: Handler = (req) => {
  const body = parseJson(req)
  const json = { "content-type": "application/json" }
  if (!/^\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+$/.test(req.path)) {
    return { status: 404, body: "{\"message\": \"Unknown Webhook\", \"code\": 10015}", headers: json, problem: "Unknown Webhook" }
  }
  const problem = firstProblem([[isJsonPost(req) && body !== undefined, "the body is not JSON"]]) ??
    (body?.["content"] === undefined && body?.["embeds"] === undefined ? "Cannot send an empty message" : undefined) ??
    discordEmbedProblem(body?.["embeds"])
  return problem === undefined
    ? { status: 204 }
    : { status: 400, body: JSON.stringify({ message: problem, code: 50035 }), headers: json, problem }
}

// ---------------------------------------------------------------------------
// Teams Workflows webhooks: a `message` with one Adaptive Card attachment; 202 Accepted.

export const teamsHandler: Handler = (req) => {
  const body = parseJson(req)
  const attachments = body?.["attachments"]
  const first: unknown = Array.isArray(attachments) ? attachments[0] : undefined
  const card = isObject(first) ? first["content"] : undefined
  const problem = firstProblem([
    [isJsonPost(req) && body !== undefined, "the body is not JSON"],
    [body?.["type"] === "message", "type must be \"message\""],
    [Array.isArray(attachments) && attachments.length >= 1, "attachments are required"],
    [isObject(first) && first["contentType"] === "application/vnd.microsoft.card.adaptive", "the attachment is not an Adaptive Card"],
    [isObject(card) && card["type"] === "AdaptiveCard" && card["version"] === "1.4", "content must be an AdaptiveCard of version 1.4"],
    [isObject(card) && Array.isArray(card["body"]) && (card["body"] as ReadonlyArray<unknown>).length > 0, "the card has no body"]
  ])
  return problem === undefined ? { status: 202 } : { status: 400, body: problem, problem }
}

// ---------------------------------------------------------------------------
// Twilio Messages API: `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded, Basic auth; 201 with the message.

/** A Twilio account: `accountSid:authToken` is the only accepted Basic credential. */
export const twilioHandler = (accountSid: string, authToken: string): Handler => (req) => {
  const json = { "content-type": "application/json" }
  const error = (status: number, code: number, message: string) =>
    ({ status, body: JSON.stringify({ code, message, status }), headers: json, problem: `${code} ${message}` })
  if (req.headers.authorization !== `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`) {
    return error(401, 20003, "Authenticate")
  }
  if (req.method !== "POST" || req.path !== `/2010-04-01/Accounts/${accountSid}/Messages.json`) {
    return error(404, 20404, "The requested resource was not found")
  }
  if (req.headers["content-type"] !== "application/x-www-form-urlencoded") return error(400, 21620, "Invalid media type")
  const form = new URLSearchParams(req.body.toString("utf8"))
  const e164 = /^\+[1-9][0-9]{7,14}$/
  if (!e164.test(form.get("To") ?? "")) return error(400, 21211, "Invalid 'To' Phone Number")
  if (!e164.test(form.get("From") ?? "")) return error(400, 21212, "Invalid 'From' Phone Number")
  const body = form.get("Body") ?? ""
  if (body === "") return error(400, 21602, "Message body is required")
  if ([...body].length > 1600) return error(400, 21617, "The concatenated message body exceeds the 1600 character limit")
  const sid = `SM${randomBytes(16).toString("hex")}`
  return { status: 201, headers: json, body: JSON.stringify({ sid, account_sid: accountSid, to: form.get("To"), from: form.get("From"), body, status: "queued" }) }
}

// ---------------------------------------------------------------------------
// PagerDuty Events API v2: `POST /v2/enqueue`; 202 with the dedup key, 400 "invalid event".

export const pagerDutyHandler: Handler = (req) => {
  const body = parseJson(req)
  const payload = body?.["payload"]
  const action = body?.["event_action"]
  const problem = firstProblem([
    [req.path === "/v2/enqueue", "unknown path"],
    [isJsonPost(req) && body !== undefined, "the body is not JSON"],
    [typeof body?.["routing_key"] === "string" && body["routing_key"].length === 32, "'routing_key' must be 32 characters"],
    [action === "trigger" || action === "acknowledge" || action === "resolve", "'event_action' is invalid"],
    [action === "trigger" || nonEmptyText(body?.["dedup_key"], 255), "'dedup_key' is required to acknowledge or resolve"],
    [body?.["dedup_key"] === undefined || nonEmptyText(body["dedup_key"], 255), "'dedup_key' must be 1 to 255 characters"]
  ]) ?? (action !== "trigger" ? undefined : firstProblem([
    [isObject(payload), "'payload' is required to trigger"],
    [isObject(payload) && nonEmptyText(payload["summary"], 1024), "'payload.summary' is required"],
    [isObject(payload) && nonEmptyText(payload["source"], 255), "'payload.source' is required"],
    [isObject(payload) && ["critical", "error", "warning", "info"].includes(String(payload["severity"])), "'payload.severity' is invalid"],
    [!isObject(payload) || payload["timestamp"] === undefined || !Number.isNaN(Date.parse(String(payload["timestamp"]))), "'payload.timestamp' is invalid"]
  ]))
  const json = { "content-type": "application/json" }
  return problem === undefined
    ? { status: 202, headers: json, body: JSON.stringify({ status: "success", message: "Event processed", dedup_key: body?.["dedup_key"] }) }
    : { status: 400, headers: json, body: JSON.stringify({ status: "invalid event", message: "Event object is invalid", errors: [problem] }), problem }
}

// ---------------------------------------------------------------------------
// SMTP: a real server (smtp-server), with or without authentication.

export interface Mail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly raw: string
  /** The authenticated user, when the client logged in. */
  readonly user: string | undefined
}

export interface SmtpReceiver {
  readonly port: number
  readonly mails: Array<Mail>
  readonly close: () => Promise<void>
}

/**
 * An SMTP server on 127.0.0.1 without STARTTLS; with `credentials`, only that
 * user may send (535 otherwise). `options` override the server's settings
 * (a stand-in that refuses recipients, or never answers).
 */
export const startSmtpReceiver = async (
  credentials?: { readonly user: string; readonly password: string },
  options: Partial<SMTPServerOptions> = {}
): Promise<SmtpReceiver> => {
  const mails: Array<Mail> = []
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    logger: false,
    authOptional: credentials === undefined,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (credentials !== undefined && auth.username === credentials.user && auth.password === credentials.password) {
        callback(null, { user: auth.username })
      } else {
        callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }))
      }
    },
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (c: Buffer) => chunks.push(c))
      stream.on("end", () => {
        mails.push({
          from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          user: typeof session.user === "string" ? session.user : undefined
        })
        callback()
      })
    },
    ...options
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.server.address() as AddressInfo).port
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/** The header block of a raw message, unfolded, by lower-case name. */
export const mailHeaders = (raw: string): Map<string, string> => {
  const head = raw.slice(0, raw.indexOf("\r\n\r\n")).replace(/\r\n[ \t]+/g, " ")
  return new Map(head.split("\r\n").map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]))
}

/** RFC 2047 encoded words (=?UTF-8?B?…?= / Q) decoded. */
export const decodeWords = (value: string): string =>
  value.replace(/=\?UTF-8\?([BQ])\?([^?]*)\?=\s*/gi, (_m, enc: string, text: string) =>
    enc.toUpperCase() === "B"
      ? Buffer.from(text, "base64").toString("utf8")
      : Buffer.from(text.replace(/_/g, " ").replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(Number.parseInt(h, 16))), "latin1")
        .toString("utf8"))

/** The decoded body of the first part with `contentType` (quoted-printable, base64 or plain); "" when there is none. */
export const mailPart = (raw: string, contentType: string): string => {
  const at = raw.toLowerCase().indexOf(`content-type: ${contentType}`)
  if (at === -1) return ""
  const partHead = raw.slice(at, raw.indexOf("\r\n\r\n", at))
  const start = raw.indexOf("\r\n\r\n", at) + 4
  const end = raw.indexOf("\r\n--", start)
  const body = raw.slice(start, end === -1 ? undefined : end)
  if (/quoted-printable/i.test(partHead)) {
    const bytes = body.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
    return Buffer.from(bytes, "latin1").toString("utf8")
  }
  if (/base64/i.test(partHead)) return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
  return body
}
