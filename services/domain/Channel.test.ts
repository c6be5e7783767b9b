import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import {
  channelKinds,
  type ChannelType,
  channelTypes,
  decodeChannelSettings,
  type FieldIssue,
  maskToken,
  maskUrl,
  secretFields,
  splitSecrets,
  testPayload,
  unknownPlaceholders
} from "./Channel.ts"

const slackUrl = "https://hooks.slack.com/services/T0000/B0000/abcdefghijklmnopqrstuvwx"
const sid = `AC${"0123456789abcdef".repeat(2)}`

const valid = (type: ChannelType, input: unknown): Record<string, unknown> => {
  const r = decodeChannelSettings(type, input)
  if (Result.isFailure(r)) throw new Error(`${r.failure.field} ${r.failure.message}`)
  return r.success as Record<string, unknown>
}
const issue = (type: ChannelType, input: unknown): FieldIssue => {
  const r = decodeChannelSettings(type, input)
  if (Result.isSuccess(r)) throw new Error(`accepted: ${JSON.stringify(r.success)}`)
  return r.failure
}

describe("channel settings: defaults per type", () => {
  it("slack: channel and webhook_url are enough", () => {
    assert.deepStrictEqual(valid("slack", { channel: "#ops", webhook_url: slackUrl }), {
      channel: "#ops",
      webhook_url: slackUrl,
      mention_users: [],
      thread_replies: false,
      channel_mentions: "none"
    })
  })
  it("discord, teams, pagerduty, sms, webhook apply their defaults", () => {
    assert.deepStrictEqual(valid("discord", { webhook_url: "https://discord.com/api/webhooks/1/x" }), {
      webhook_url: "https://discord.com/api/webhooks/1/x",
      mention_roles: [],
      embed_color: "#5865f2"
    })
    assert.deepStrictEqual(valid("teams", { webhook_url: "https://example.webhook.office.com/x" }), {
      webhook_url: "https://example.webhook.office.com/x",
      card_title: "statusgrid",
      adaptive_cards: true,
      card_style: "default"
    })
    assert.deepStrictEqual(valid("pagerduty", { routing_key: "R".repeat(32), severity_map: { degraded: "error" } }), {
      routing_key: "R".repeat(32),
      severity_map: { critical: "critical", degraded: "error", info: "info" }
    })
    assert.deepStrictEqual(
      valid("sms", { phone_numbers: ["+14155550100"], account_sid: sid, auth_token: "t0ken", from_number: "+14155550199" }),
      { phone_numbers: ["+14155550100"], account_sid: sid, auth_token: "t0ken", from_number: "+14155550199", max_length: 160 }
    )
    assert.deepStrictEqual(valid("webhook", { url: "http://hooks.internal:8080/in" }), {
      url: "http://hooks.internal:8080/in",
      method: "POST",
      headers: {}
    })
  })
  it("email: comma-separated or array recipients, trimmed, duplicates dropped", () => {
    assert.deepStrictEqual(valid("email", { recipients: " ops@example.com, oncall@example.org ,OPS@example.com" }), {
      recipients: ["ops@example.com", "oncall@example.org"],
      include_components: true
    })
    assert.deepStrictEqual(valid("email", { recipients: ["a@example.com"], subject_template: "{status_emoji} {component_name}" })["recipients"], [
      "a@example.com"
    ])
  })
})

describe("channel settings: refusals name the field", () => {
  const cases: Array<[ChannelType, unknown, string, RegExp]> = [
    ["slack", { channel: "#ops" }, "settings.webhook_url", /is required/],
    ["slack", { channel: "#ops", webhook_url: "http://hooks.slack.com/x" }, "settings.webhook_url", /must use https, not http/],
    ["slack", { channel: "#ops", webhook_url: "not a url" }, "settings.webhook_url", /absolute https URL/],
    ["slack", { channel: "#ops", webhook_url: "https://u:p@hooks.slack.com/x" }, "settings.webhook_url", /credentials/],
    ["slack", { channel: 7, webhook_url: slackUrl }, "settings.channel", /Expected string/],
    ["slack", { channel: "#ops", webhook_url: slackUrl, channel_mentions: "everyone" }, "settings.channel_mentions", /here/],
    ["slack", { channel: "#ops", webhook_url: slackUrl, icon_emoji: "siren" }, "settings.icon_emoji", /emoji code/],
    ["slack", { channel: "#ops", webhook_url: slackUrl, colour: "red" }, "settings.colour", /is not a setting of slack channels/],
    ["discord", { webhook_url: slackUrl, embed_color: "red" }, "settings.embed_color", /#rrggbb/],
    ["teams", { webhook_url: slackUrl, card_style: "loud" }, "settings.card_style", /Expected/],
    ["email", { recipients: "ops@example.com, nope" }, "settings.recipients", /"nope" is not a valid e-mail address/],
    ["email", { recipients: "" }, "settings.recipients", /at least one address/],
    ["email", { recipients: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`) }, "settings.recipients", /at most 50/],
    ["email", { recipients: "a@example.com", subject_template: "{component} down" }, "settings.subject_template", /unknown placeholder \{component\}/],
    ["sms", { phone_numbers: ["4155550100"], account_sid: sid, auth_token: "t", from_number: "+14155550199" }, "settings.phone_numbers.0", /international format/],
    ["sms", { phone_numbers: ["+1415"], account_sid: sid, auth_token: "t", from_number: "+14155550199" }, "settings.phone_numbers.0", /8 to 15 digits/],
    ["sms", { phone_numbers: ["+14155550100"], account_sid: "AC123", auth_token: "t", from_number: "+14155550199" }, "settings.account_sid", /32 hexadecimal/],
    ["sms", { phone_numbers: ["+14155550100"], account_sid: sid, auth_token: "t", from_number: "+14155550199", max_length: 1601 }, "settings.max_length", /1 to 1600/],
    ["webhook", { url: "ftp://example.com/x" }, "settings.url", /must use http or https, not ftp/],
    ["webhook", { url: "https://example.com/x", method: "HEAD" }, "settings.method", /Expected/],
    ["webhook", { url: "https://example.com/x", headers: { Host: "evil" } }, "settings.headers.Host", /set by the delivery/],
    ["webhook", { url: "https://example.com/x", headers: { "content-length": "1" } }, "settings.headers.content-length", /set by the delivery/],
    ["webhook", { url: "https://example.com/x", headers: { "X-A": "a\r\nX-B: b" } }, "settings.headers.X-A", /line breaks/],
    ["webhook", { url: "https://example.com/x", signing_secret: "short" }, "settings.signing_secret", /16 to 256/],
    ["pagerduty", { routing_key: "abc" }, "settings.routing_key", /32-character/],
    ["pagerduty", { routing_key: "R".repeat(32), severity_map: { critical: "panic" } }, "settings.severity_map.critical", /Expected/]
  ]
  for (const [type, input, field, message] of cases) {
    it(`${type} ${JSON.stringify(input).slice(0, 80)} → ${field}`, () => {
      const found = issue(type, input)
      assert.strictEqual(found.field, field)
      assert.match(found.message, message)
    })
  }
  it("settings that are not an object", () => {
    assert.deepStrictEqual(issue("email", ["a@example.com"]).field, "settings")
  })
})

describe("channel secrets", () => {
  it("every secret field is a field of its type's schema", () => {
    assert.deepStrictEqual(secretFields.slack, ["webhook_url", "bot_token"])
    assert.deepStrictEqual(secretFields.webhook, ["headers", "signing_secret"])
    assert.deepStrictEqual(secretFields.email, [])
  })
  it("splitSecrets keeps secrets apart and masks them in the view", () => {
    const settings = valid("slack", { channel: "#ops", webhook_url: slackUrl })
    const { view, secrets } = splitSecrets("slack", settings)
    assert.deepStrictEqual(secrets, { webhook_url: slackUrl })
    assert.strictEqual(view["webhook_url"], "https://hooks.slack.com/…/uvwx")
    assert.strictEqual(view["channel"], "#ops")
    assert.deepStrictEqual({ ...view, ...secrets }, settings)
  })
  it("webhook header values and the signing secret are masked; the URL is not a secret", () => {
    const settings = valid("webhook", { url: "https://example.com/in", headers: { "X-Api-Key": "k-123456" }, signing_secret: "0123456789abcdef0123" })
    const { view, secrets } = splitSecrets("webhook", settings)
    assert.deepStrictEqual(view, { url: "https://example.com/in", method: "POST", headers: { "X-Api-Key": "…" }, signing_secret: "…0123" })
    assert.deepStrictEqual(secrets, { headers: { "X-Api-Key": "k-123456" }, signing_secret: "0123456789abcdef0123" })
  })
  it("masks keep only what identifies the secret", () => {
    assert.strictEqual(maskUrl("https://hooks.example.com/x"), "https://hooks.example.com/…")
    assert.strictEqual(maskToken("short"), "…")
    assert.strictEqual(maskToken("0123456789abcdefWXYZ"), "…WXYZ")
  })
})

/** One valid settings object per channel type: the compiler asks for one when a type is added to `channelKinds`. */
const samples: { readonly [T in ChannelType]: unknown } = {
  email: { recipients: "ops@example.com" },
  slack: { channel: "#ops", webhook_url: slackUrl, bot_token: "xoxb-0123456789-abcdef" },
  discord: { webhook_url: "https://discord.com/api/webhooks/1/abcdefghijklmnopqrstuvwxyz" },
  teams: { webhook_url: "https://example.webhook.office.com/webhookb2/abcdefghijklmnopqrstuvwxyz" },
  sms: { phone_numbers: ["+14155550100"], account_sid: sid, auth_token: "twilio-auth-token-XYZW", from_number: "+14155550199" },
  webhook: { url: "https://example.com/in", headers: { "X-Api-Key": "k-123456" }, signing_secret: "0123456789abcdef0123" },
  pagerduty: { routing_key: "R0UTINGKEY0123456789abcdefABCDEF" },
  webpush: {
    endpoint: "https://fcm.googleapis.com/fcm/send/abcdefghijklmnopqrstuvwxyz0123456789",
    keys: { p256dh: `B${"A".repeat(86)}`, auth: "AAAAAAAAAAAAAAAAAAAAAA" }
  }
}

describe("the registry of channel types", () => {
  for (const type of channelTypes) {
    it(`${type}: decoded settings split into secrets and a view the API schema accepts, no secret left in it`, () => {
      const settings = valid(type, samples[type])
      const { view, secrets } = splitSecrets(type, settings)
      assert.deepStrictEqual(Object.keys(secrets).toSorted(), secretFields[type].filter((f) => f in settings).toSorted())
      const shown = Schema.encodeUnknownSync(channelKinds[type].view as unknown as Schema.Codec<unknown, unknown>)(view)
      const text = JSON.stringify(shown)
      for (const value of Object.values(secrets)) {
        for (const leaf of typeof value === "object" && value !== null ? Object.values(value) : [value]) {
          assert.notInclude(text, String(leaf), `${type}: a secret shown in the view`)
        }
      }
      assert.deepStrictEqual({ ...view, ...secrets }, settings)
    })
  }
  it("webpush: the endpoint is masked as a URL, the keys entirely", () => {
    const { view } = splitSecrets("webpush", valid("webpush", samples.webpush))
    assert.deepStrictEqual(view, { endpoint: "https://fcm.googleapis.com/…/6789", keys: "…" })
  })
  it("webpush refusals name the field", () => {
    const sub = samples.webpush as { endpoint: string; keys: { p256dh: string; auth: string } }
    assert.strictEqual(issue("webpush", { ...sub, endpoint: "http://push.example.com/x" }).field, "settings.endpoint")
    assert.strictEqual(issue("webpush", { ...sub, keys: { ...sub.keys, p256dh: "short" } }).field, "settings.keys.p256dh")
    assert.strictEqual(issue("webpush", { ...sub, keys: { ...sub.keys, auth: "AAAAAAAAAAAAAAAAAAAAAB" } }).field, "settings.keys.auth")
    assert.strictEqual(issue("webpush", { endpoint: sub.endpoint }).field, "settings.keys")
  })
})

describe("templates and the test payload", () => {
  it("unknownPlaceholders lists names outside the spec's placeholders, once each", () => {
    assert.deepStrictEqual(unknownPlaceholders("{status_emoji} {component_name} is {status} for {duration}"), [])
    assert.deepStrictEqual(unknownPlaceholders("{foo} {bar} {foo} { not one } {}"), ["foo", "bar"])
  })
  it("the test payload has the spec's webhook payload shape", () => {
    const now = new Date("2026-01-02T03:04:05.678Z")
    assert.deepStrictEqual(testPayload(now), {
      event: "test",
      timestamp: "2026-01-02T03:04:05.678Z",
      stack: { id: "00000000-0000-0000-0000-000000000000", name: "Example stack", slug: "example-stack" },
      component: {
        id: "00000000-0000-0000-0000-000000000000",
        name: "Example component",
        previous_status: "operational",
        current_status: "degraded"
      },
      incident: { id: "00000000-0000-0000-0000-000000000000", created_at: "2026-01-02T03:04:05.678Z", resolved_at: null }
    })
  })
})
