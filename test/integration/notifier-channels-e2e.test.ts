import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { createHmac } from "node:crypto"
import { call, newTenant } from "../support/api.ts"
import type { Tenant } from "../support/api.ts"
import {
  decodeWords,
  discordHandler,
  type HttpReceiver,
  mailHeaders,
  mailPart,
  pagerDutyHandler,
  type Received,
  slackHandler,
  type SmtpReceiver,
  startHttpReceiver,
  startSmtpReceiver,
  teamsHandler,
  twilioHandler,
  webhookHandler,
  webhookSignatureProblem
} from "../support/receivers.ts"
import { trustedTestCerts } from "../support/tls.ts"
import { waitFor } from "../support/eventually.ts"
import { api, engine, notifier, Sim, simulatedStatuspage, simulator } from "../support/engine.ts"

/**
 * One simulated upstream flip, through poller, event stream, rules and
 * outbox, to a stand-in of every channel's real service (HTTPS for the chat
 * webhooks, whose settings only allow https; a real SMTP server with
 * authentication), configured as an operator would: SMTP_URL, SMTP_FROM,
 * TWILIO_API_URL, PAGERDUTY_EVENTS_URL.
 */

const twilio = { sid: `AC${"0123456789abcdef".repeat(2)}`, token: "twilio-auth-token-0123", from: "+15005550006" }
const phones = ["+14155550100", "+442071838750"]
const recipients = ["oncall@example.com", "cto@example.com"]
const routingKey = "R0123456789abcdefABCDEF012345678"
const smtpUser = { user: "mailer", password: "p@ss word" }
const publicUrl = "https://status.example.test"
const paths = { slack: "/services/T0001/B0001/XXXXsecret", discord: "/api/webhooks/1234567890/tok-en_1", teams: "/workflows/abc/triggers/manual/paths/invoke" }

interface StandIns {
  readonly webhook: HttpReceiver
  /** Signing secrets the webhook endpoint accepts: the API generates one when the channel is created. */
  readonly webhookSecrets: Array<string>
  readonly slack: HttpReceiver
  readonly discord: HttpReceiver
  readonly teams: HttpReceiver
  readonly twilio: HttpReceiver
  readonly pagerduty: HttpReceiver
  readonly smtp: SmtpReceiver
}

class Stands extends Context.Service<Stands, StandIns>()("test/notifier-channels-e2e/Stands") {}

const scoped = <A extends { readonly close: () => Promise<void> }>(start: () => Promise<A>) =>
  Effect.acquireRelease(Effect.promise(start), (r) => Effect.promise(r.close))

/** Every stand-in; the HTTPS ones under a test CA that the senders trust for the scope (`trustedTestCerts`). */
const stands = Layer.effect(Stands, Effect.gen(function*() {
  const certs = yield* trustedTestCerts
  const webhookSecrets: Array<string> = []
  return {
    webhook: yield* scoped(() => startHttpReceiver(webhookHandler(webhookSecrets))),
    webhookSecrets,
    slack: yield* scoped(() => startHttpReceiver(slackHandler, certs)),
    discord: yield* scoped(() => startHttpReceiver(discordHandler, certs)),
    teams: yield* scoped(() => startHttpReceiver(teamsHandler, certs)),
    twilio: yield* scoped(() => startHttpReceiver(twilioHandler(twilio.sid, twilio.token))),
    pagerduty: yield* scoped(() => startHttpReceiver(pagerDutyHandler)),
    smtp: yield* scoped(() => startSmtpReceiver(smtpUser))
  }
}))


/** Everything of one process (stores, poller, notifier, API), configured with the stand-ins' addresses. */
const app = (s: StandIns) =>
  engine({
    name: "channels",
    config: {
      NOTIFIER_POLL_MS: "50",
      // The stand-ins listen on loopback, which the egress guard refuses to deliver to by default.
      NOTIFIER_ALLOW_PRIVATE: "true",
      PUBLIC_URL: publicUrl,
      SMTP_URL: `smtp://${smtpUser.user}:${encodeURIComponent(smtpUser.password)}@127.0.0.1:${s.smtp.port}`,
      SMTP_FROM: "statusgrid <alerts@status.example.test>",
      TWILIO_API_URL: s.twilio.url,
      PAGERDUTY_EVENTS_URL: `${s.pagerduty.url}/v2/enqueue`
    }
  }, Layer.mergeAll(notifier, api, simulator))

const TestLayer = Layer.unwrap(Effect.gen(function*() {
  return app(yield* Stands)
})).pipe(Layer.provideMerge(stands))


// Bodies are read field by field below, each value asserted where it is used.
// oxlint-disable-next-line typescript/no-explicit-any
const json = (r: Received): any => JSON.parse(r.body.toString("utf8"))
const form = (r: Received) => new URLSearchParams(r.body.toString("utf8"))

/** How many messages each receiver has: one request per HTTP channel, one per number for SMS, one mail. */
const counts = (s: StandIns) => ({
  webhook: s.webhook.requests.length,
  slack: s.slack.requests.length,
  discord: s.discord.requests.length,
  teams: s.teams.requests.length,
  sms: s.twilio.requests.length,
  pagerduty: s.pagerduty.requests.length,
  email: s.smtp.mails.length
})
const perAlert = { webhook: 1, slack: 1, discord: 1, teams: 1, sms: phones.length, pagerduty: 1, email: 1 }
const times = (n: number) => Object.fromEntries(Object.entries(perAlert).map(([k, v]) => [k, v * n]))

/** The notification center as the organization's viewer sees it. */
const deliveries = (tenant: Tenant) =>
  call("GET", "/deliveries?limit=100", { key: tenant.keys.viewer }).pipe(Effect.map((r) => {
    assert.strictEqual(r.status, 200)
    return r.body.data as ReadonlyArray<{ status: string; attempts: number; event_type: string; last_error: string | null; channel: { type: string } }>
  }))

/**
 * Waits until every receiver has `alerts` alerts' worth of messages, then
 * 1.5 s more, and asserts no more came and no stand-in refused anything.
 * On a timeout, says what arrived and what the notification center shows.
 */
const receiveAlerts = (alerts: number, tenant: Tenant) =>
  Effect.gen(function*() {
    const s = yield* Stands
    const expected = times(alerts)
    const arrived = Effect.sync(() => {
      const now = counts(s)
      return Object.entries(expected).every(([k, v]) => now[k as keyof typeof now] >= v) ? now : undefined
    })
    yield* waitFor(20_000, `alert ${alerts} at every receiver`, arrived).pipe(
      Effect.catchCause((cause) =>
        Effect.flatMap(deliveries(tenant), (center) =>
          Effect.die(new Error(`${String(cause)}; received ${JSON.stringify(counts(s))}; deliveries ${
            JSON.stringify(center.map((d) => `${d.channel.type} ${d.event_type} ${d.status} ${d.last_error ?? ""}`))}`)))
      )
    )
    yield* Effect.sleep("1500 millis")
    assert.deepStrictEqual(counts(s), expected, "exactly one message per alert at each receiver")
    for (const [name, r] of Object.entries({ webhook: s.webhook, slack: s.slack, discord: s.discord, teams: s.teams, twilio: s.twilio, pagerduty: s.pagerduty })) {
      assert.deepStrictEqual(r.problems, [], `${name} refused: ${r.problems.join("; ")}`)
    }
  })

interface Setup {
  readonly tenant: Tenant
  readonly sourceKey: string
  readonly incidentId: string
  readonly componentId: string
  readonly componentName: string
  readonly stack: { readonly id: string; readonly name: string; readonly slug: string }
  readonly secret: string
}
let setup: Setup | undefined

const channelTypes = ["discord", "email", "pagerduty", "slack", "sms", "teams", "webhook"]

describe("notifier end to end, every channel", () => {
  layer(TestLayer, { timeout: 60_000, excludeTestServices: true })("simulator → poller → rules → outbox → each channel's service", (it) => {
    it.effect("a flip to critical reaches every channel's receiver once, in the shape its service accepts", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const s = yield* Stands
        const { page, target, componentId } = yield* simulatedStatuspage("channels-flip", "Channels Flip", 2)

        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const stack = yield* call("POST", "/stacks", { key, body: { name: "Checkout" } })
        assert.strictEqual(stack.status, 201)
        assert.strictEqual((yield* call("POST", `/stacks/${stack.body.id}/items`, { key, body: { kind: "component", component_id: componentId } })).status, 201)

        const create = (type: string, settings: Record<string, unknown>) =>
          call("POST", "/channels", { key, body: { type, name: `Ops ${type}`, settings } }).pipe(Effect.map((r) => {
            assert.strictEqual(r.status, 201, `${type} channel: ${JSON.stringify(r.body)}`)
            return r.body as { id: string; signing_secret?: string }
          }))
        const webhook = yield* create("webhook", { url: `${s.webhook.url}/hooks/statusgrid` })
        assert.match(webhook.signing_secret ?? "", /^[\x21-\x7e]{16,}$/, "the generated signing secret is returned once, on create")
        s.webhookSecrets.push(webhook.signing_secret!)
        const channels = [
          webhook,
          yield* create("slack", { channel: "#ops", webhook_url: `${s.slack.url}${paths.slack}` }),
          yield* create("discord", { webhook_url: `${s.discord.url}${paths.discord}`, embed_color: "#ff0000" }),
          yield* create("teams", { webhook_url: `${s.teams.url}${paths.teams}?api-version=2016-06-01&sig=abc`, card_title: "Checkout alerts" }),
          yield* create("email", { recipients }),
          yield* create("sms", { phone_numbers: phones, account_sid: twilio.sid, auth_token: twilio.token, from_number: twilio.from }),
          yield* create("pagerduty", { routing_key: routingKey })
        ]
        const channel_ids = channels.map((c) => c.id)
        // The second critical rule to the same channels: still one message per alert and channel.
        const rules = [["Critical components", "component.critical"], ["Also critical", "component.critical"], ["Recovered components", "component.recovered"]]
        for (const [name, trigger] of rules) {
          const rule = yield* call("POST", "/rules", { key, body: { name, triggers: [trigger], channel_ids } })
          assert.strictEqual(rule.status, 201, JSON.stringify(rule.body))
        }

        const incident = sim.state.openIncident(page.key, { title: "Checkout down", impact: "critical", components: [target.id], component_status: "critical" })
        yield* receiveAlerts(1, tenant)
        const name = target.name

        // Webhook: both signatures verify with the secret returned on create; the spec's payload.
        const [hook] = s.webhook.requests
        assert.strictEqual(hook!.path, "/hooks/statusgrid")
        assert.strictEqual(hook!.headers["x-service-signature"], createHmac("sha256", webhook.signing_secret!).update(hook!.body).digest("hex"))
        assert.isUndefined(webhookSignatureProblem(hook!, webhook.signing_secret!))
        assert.isDefined(webhookSignatureProblem(hook!, "another-secret-0123456789"), "a wrong secret does not verify")
        const sent = json(hook!)
        assert.strictEqual(sent.event, "component.status_changed")
        assert.isFalse(Number.isNaN(Date.parse(sent.timestamp)))
        assert.deepStrictEqual(sent.stack, { id: stack.body.id, name: "Checkout", slug: stack.body.slug })
        assert.deepStrictEqual(
          [sent.component.id, sent.component.name, sent.component.previous_status, sent.component.current_status],
          [componentId, name, "operational", "critical"]
        )
        assert.isString(sent.incident.id)
        assert.isString(sent.incident.created_at)

        // Slack: fallback text and Block Kit header + section, naming the component.
        const slack = json(s.slack.requests[0]!)
        assert.strictEqual(s.slack.requests[0]!.path, paths.slack)
        assert.include(slack.text, name)
        assert.deepStrictEqual(slack.blocks.slice(0, 2).map((b: { type: string }) => b.type), ["header", "section"])
        assert.include(slack.blocks[0].text.text, name)
        assert.include(JSON.stringify(slack.blocks), "critical")
        assert.strictEqual(slack.channel, "#ops")

        // Discord: one embed, the channel's colour as an integer, the component, stack and status as fields.
        const discord = json(s.discord.requests[0]!)
        assert.strictEqual(s.discord.requests[0]!.path, paths.discord)
        const [embed] = discord.embeds
        assert.include(embed.title, name)
        assert.strictEqual(embed.color, 0xff0000)
        const fields = Object.fromEntries(embed.fields.map((f: { name: string; value: string }) => [f.name, f.value]))
        assert.strictEqual(fields["Component"], name)
        assert.strictEqual(fields["Stack"], "Checkout")
        assert.match(fields["Status"], /operational.*critical/)

        // Teams: an Adaptive Card 1.4 in a message envelope, with the channel's card title and the component.
        const teams = json(s.teams.requests[0]!)
        assert.strictEqual(s.teams.requests[0]!.path, `${paths.teams}?api-version=2016-06-01&sig=abc`)
        assert.strictEqual(teams.type, "message")
        assert.strictEqual(teams.attachments[0].contentType, "application/vnd.microsoft.card.adaptive")
        assert.strictEqual(teams.attachments[0].content.type, "AdaptiveCard")
        assert.strictEqual(teams.attachments[0].content.version, "1.4")
        const card = JSON.stringify(teams.attachments[0].content)
        for (const text of ["Checkout alerts", name, "critical"]) assert.include(card, text)

        // Twilio: one message per number, authenticated as the account, ≤ 160 characters with a whole link.
        const texts = s.twilio.requests.map((r) => {
          assert.strictEqual(r.path, `/2010-04-01/Accounts/${twilio.sid}/Messages.json`)
          assert.strictEqual(r.headers.authorization, `Basic ${Buffer.from(`${twilio.sid}:${twilio.token}`).toString("base64")}`)
          assert.strictEqual(form(r).get("From"), twilio.from)
          return { to: form(r).get("To"), body: form(r).get("Body")! }
        })
        assert.deepStrictEqual(texts.map((t) => t.to).toSorted(), phones.toSorted())
        for (const { body } of texts) {
          assert.isAtMost([...body].length, 160)
          assert.match(body, new RegExp(`${publicUrl.replace(/\./g, "\\.")}/\\S+$`), "ends with the whole link to the dashboard")
          assert.include(body, name)
        }

        // PagerDuty: a trigger with a dedup key, summary, severity and source.
        const trigger = json(s.pagerduty.requests[0]!)
        assert.strictEqual(trigger.routing_key, routingKey)
        assert.strictEqual(trigger.event_action, "trigger")
        assert.isString(trigger.dedup_key)
        assert.isAbove(trigger.dedup_key.length, 0)
        assert.include(trigger.payload.summary, name)
        assert.strictEqual(trigger.payload.severity, "critical")
        assert.isString(trigger.payload.source)

        // E-mail: one message to every recipient, sent as the configured user and sender.
        const [mail] = s.smtp.mails
        assert.deepStrictEqual(mail!.to.toSorted(), recipients.toSorted())
        assert.strictEqual(mail!.user, smtpUser.user)
        assert.strictEqual(mail!.from, "alerts@status.example.test")
        assert.include(decodeWords(mailHeaders(mail!.raw).get("subject") ?? ""), name)
        const text = mailPart(mail!.raw, "text/plain")
        assert.include(text, name)
        assert.match(text, /operational\s*→\s*critical/)
        assert.include(mailPart(mail!.raw, "text/html"), name)

        const center = yield* deliveries(tenant)
        assert.deepStrictEqual(center.map((d) => d.channel.type).toSorted(), channelTypes)
        assert.deepStrictEqual([...new Set(center.map((d) => `${d.event_type} ${d.status} ${d.attempts}`))], ["component.critical delivered 1"])

        setup = {
          tenant,
          sourceKey: page.key,
          incidentId: incident.id,
          componentId,
          componentName: name,
          stack: { id: stack.body.id, name: "Checkout", slug: stack.body.slug },
          secret: webhook.signing_secret!
        }
      }))

    it.effect("resolving the incident sends the recovery to every channel, and resolves the PagerDuty alert", () =>
      Effect.gen(function*() {
        assert.isDefined(setup, "the critical flip ran first")
        const { componentId, componentName: name, incidentId, secret, sourceKey, stack, tenant } = setup!
        const sim = yield* Sim
        const s = yield* Stands
        sim.state.resolveIncident(sourceKey, incidentId, {})
        yield* receiveAlerts(2, tenant)

        const hook = s.webhook.requests[1]!
        assert.isUndefined(webhookSignatureProblem(hook, secret))
        const sent = json(hook)
        assert.deepStrictEqual(sent.stack, stack)
        assert.deepStrictEqual(
          [sent.component.id, sent.component.name, sent.component.previous_status, sent.component.current_status],
          [componentId, name, "critical", "operational"]
        )

        const [trigger, resolve] = s.pagerduty.requests.map(json)
        assert.strictEqual(resolve.event_action, "resolve")
        assert.strictEqual(resolve.routing_key, routingKey)
        assert.strictEqual(resolve.dedup_key, trigger.dedup_key)

        for (const text of [json(s.slack.requests[1]!).text, json(s.discord.requests[1]!).embeds[0].title, JSON.stringify(json(s.teams.requests[1]!))]) {
          assert.include(text, name)
        }
        assert.include(JSON.stringify(json(s.teams.requests[1]!)), "operational")
        for (const r of s.twilio.requests.slice(phones.length)) assert.include(form(r).get("Body"), name)
        const mail = s.smtp.mails[1]!
        assert.deepStrictEqual(mail.to.toSorted(), recipients.toSorted())
        assert.match(mailPart(mail.raw, "text/plain"), /critical\s*→\s*operational/)

        const center = yield* deliveries(tenant)
        assert.strictEqual(center.length, 2 * channelTypes.length)
        const recovered = center.filter((d) => d.event_type === "component.recovered")
        assert.deepStrictEqual(recovered.map((d) => d.channel.type).toSorted(), channelTypes)
        assert.deepStrictEqual([...new Set(center.map((d) => d.status))], ["delivered"])
      }))
  })
})
