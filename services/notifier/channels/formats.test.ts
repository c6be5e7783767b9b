import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { defaultSeverityMap } from "../../domain/Channel.ts"
import { colorInt, discordBody } from "./discord.ts"
import { emailHtml, emailSubject, emailText, messageIdFor, smtpResult } from "./email.ts"
import { dedupKey, isResolution, pagerDutyBody } from "./pagerduty.ts"
import { sampleMessage } from "./sample.ts"
import { settingsOf } from "./settings.ts"
import { threadOf } from "../Outbox.ts"
import { escapeSlack, slackApiResult, slackBody, slackMentions } from "./slack.ts"
import { combineResults, smsBody } from "./sms.ts"
import { adaptiveCardBody, messageCardBody } from "./teams.ts"
import { clip } from "./text.ts"

const message = sampleMessage()
const slack = { channel: "#ops", webhook_url: "https://hooks.slack.com/services/T/B/X", mention_users: [], thread_replies: false, channel_mentions: "none" } as const

describe("text", () => {
  it("clip cuts by code points and never splits an emoji", () => {
    expect(clip("abc", 3)).toBe("abc")
    expect(clip("abcd", 3)).toBe("ab…")
    expect(clip("🔴🔴🔴🔴", 3)).toBe("🔴🔴…")
  })
})

describe("Slack", () => {
  it("escapes &, < and > only", () => {
    expect(escapeSlack("a < b && c > d *bold*")).toBe("a &lt; b &amp;&amp; c &gt; d *bold*")
  })

  it("formats user ids and channel-wide mentions", () => {
    expect(slackMentions({ ...slack, mention_users: ["U1", "@U2"], channel_mentions: "channel" })).toBe("<@U1> <@U2> <!channel>")
    expect(slackMentions(slack)).toBe("")
  })

  it("sends no mention line, username or emoji when none is set, and keeps Slack's length limits", () => {
    const long = sampleMessage({ title: "t".repeat(400), text: "x".repeat(5000) })
    const body = slackBody(slack, long) as { blocks: Array<{ text?: { text: string } }> } & Record<string, unknown>
    expect(body.username).toBeUndefined()
    expect(body.icon_emoji).toBeUndefined()
    expect(body.blocks[0]!.text!.text).toHaveLength(150)
    expect(body.blocks[1]!.text!.text.length).toBeLessThanOrEqual(3000)
    expect(body.blocks[1]!.text!.text.startsWith("xxx")).toBe(true)
  })

  it("uses display_name when there is no username", () => {
    expect(slackBody({ ...slack, display_name: "Status bot" }, message).username).toBe("Status bot")
  })
})

describe("Discord", () => {
  it("converts the hex colour", () => {
    expect(colorInt("#5865f2")).toBe(0x5865f2)
    expect(colorInt("#000000")).toBe(0)
  })

  it("has no content and no role pings without mention_roles", () => {
    const body = discordBody({ webhook_url: "https://discord.com/api/webhooks/1/t", mention_roles: [], embed_color: "#5865f2" }, message)
    expect(body.content).toBeUndefined()
    expect(body.allowed_mentions).toEqual({ parse: [], roles: [] })
  })

  it("drops empty fields and shows a status without a previous one alone", () => {
    const m = sampleMessage({ payload: { ...message.payload, stack: { id: "", name: "", slug: "" }, component: { ...message.payload.component, previous_status: "" } } })
    const [embed] = discordBody({ webhook_url: "https://d/x", mention_roles: [], embed_color: "#000000" }, m).embeds as Array<{ fields: Array<unknown> }>
    expect(embed!.fields).toEqual([{ name: "Component", value: "API", inline: true }, { name: "Status", value: "critical", inline: true }])
  })
})

describe("Teams", () => {
  const teams = { webhook_url: "https://example.webhook.office.com/x", card_title: "statusgrid", adaptive_cards: true, card_style: "default" } as const
  it("colours the MessageCard by level", () => {
    expect(messageCardBody(teams, sampleMessage({ level: "degraded" })).themeColor).toBe("FFB900")
    expect(messageCardBody(teams, sampleMessage({ level: "info" })).themeColor).toBe("0078D4")
  })
  it("puts the card style on the header container", () => {
    const card = (adaptiveCardBody({ ...teams, card_style: "good" }, message).attachments as Array<{ content: { body: Array<{ style?: string }> } }>)[0]!
    expect(card.content.body[0]!.style).toBe("good")
  })
})

const recovered = (event: string, current: string) =>
  sampleMessage({ event, payload: { ...message.payload, event, component: { ...message.payload.component, current_status: current } } })

describe("PagerDuty", () => {

  it("resolves recoveries, resolved incidents and returns to operational; triggers the rest", () => {
    expect(isResolution(recovered("monitor.recovered", "up"))).toBe(true)
    expect(isResolution(recovered("incident.resolved", "critical"))).toBe(true)
    expect(isResolution(recovered("component.status_changed", "operational"))).toBe(true)
    expect(isResolution(recovered("component.status_changed", "degraded"))).toBe(false)
    expect(isResolution(recovered("monitor.down", "down"))).toBe(false)
    expect(isResolution(recovered("incident.updated", "operational"))).toBe(false)
  })

  it("keys alerts by component, incident events by incident, tests by delivery", () => {
    expect(dedupKey(message, "k")).toBe("statusgrid:component:comp-1")
    expect(dedupKey(sampleMessage({ event: "incident.created" }), "k")).toBe("statusgrid:incident:inc-1")
    expect(dedupKey(sampleMessage({ event: "test" }), "k-1")).toBe("statusgrid:test:k-1")
  })

  it("maps each level through the default severity map", () => {
    const settings = { routing_key: "R".repeat(32), severity_map: defaultSeverityMap }
    const severities = (["critical", "degraded", "info"] as const).map((level) =>
      (pagerDutyBody(settings, sampleMessage({ level }), "k").payload as { severity: string }).severity)
    expect(severities).toEqual(["critical", "warning", "info"])
  })
})

describe("Slack Web API answers", () => {
  it("takes the ts of an accepted message, and tells final errors from retryable ones", () => {
    expect(slackApiResult(JSON.stringify({ ok: true, channel: "C1", ts: "1760000000.000100" }))).toMatchObject({ ok: true, reference: "1760000000.000100" })
    expect(slackApiResult(JSON.stringify({ ok: false, error: "channel_not_found" }))).toMatchObject({ ok: false, retryable: false, error: "Slack API: channel_not_found" })
    expect(slackApiResult(JSON.stringify({ ok: false, error: "ratelimited" }))).toMatchObject({ ok: false, retryable: true })
    expect(slackApiResult("<html>")).toMatchObject({ ok: false, retryable: true })
  })
})

describe("Slack threads", () => {
  const at = Date.parse("2026-11-22T12:00:00Z")
  it("replies in the subject's open thread, starts a new one after a recovery or a day", () => {
    expect(threadOf(null, at)).toBeNull()
    expect(threadOf({ thread_ref: "1.1", event_type: "component.degraded", delivered_at: "2026-11-22T11:00:00Z" }, at)).toBe("1.1")
    expect(threadOf({ thread_ref: "1.1", event_type: "component.recovered", delivered_at: "2026-11-22T11:00:00Z" }, at)).toBeNull()
    expect(threadOf({ thread_ref: "1.1", event_type: "incident.resolved", delivered_at: "2026-11-22T11:00:00Z" }, at)).toBeNull()
    expect(threadOf({ thread_ref: "1.1", event_type: "component.critical", delivered_at: "2026-11-21T11:00:00Z" }, at)).toBeNull()
  })
})

describe("SMS", () => {
  const url = "https://sg.example.com/i/Ab3dE"
  it("keeps short messages whole: title, text, link", () => {
    expect(smsBody(sampleMessage({ title: "API down", text: "Payments.", url }), 160)).toBe(`API down Payments. ${url}`)
  })
  it("cuts the text, not the link, to exactly the limit", () => {
    const body = smsBody(sampleMessage({ title: "API is critical", text: "word ".repeat(100), url }), 160)
    expect([...body]).toHaveLength(160)
    expect(body.endsWith(`… ${url}`)).toBe(true)
  })
  it("counts emoji as one character each", () => {
    const body = smsBody(sampleMessage({ title: "🔴".repeat(200), text: "", url }), 160)
    expect([...body]).toHaveLength(160)
  })
  it("uses the alert's short link instead of the long page URL when there is one", () => {
    const long = `https://sg.example.com/dashboard/acme/stacks/${"checkout-".repeat(8)}`
    const body = smsBody({ ...sampleMessage({ title: "API down", text: "word ".repeat(40), url: long }), shortUrl: url }, 160)
    expect(body.endsWith(` ${url}`)).toBe(true)
    expect(body).not.toContain("dashboard")
    expect([...body]).toHaveLength(160)
  })
  it("sends the link alone when nothing else fits, and the text alone without a link", () => {
    expect(smsBody(sampleMessage({ url }), 31)).toBe(url)
    expect(smsBody(sampleMessage({ url: "", title: "x".repeat(50), text: "" }), 10)).toBe(`${"x".repeat(9)}…`)
  })
  it("combines per-number results", () => {
    const ok = { ok: true, status: 201, retryable: false, error: "" }
    const final = { ok: false, status: 400, retryable: false, error: "HTTP 400" }
    const later = { ok: false, status: 429, retryable: true, retryAfterMs: 5000, error: "HTTP 429" }
    expect(combineResults(["+1", "+2"], [ok, ok])).toEqual(ok)
    expect(combineResults(["+1", "+2", "+3"], [final, ok, later])).toEqual({
      ok: false, status: 400, retryable: true, retryAfterMs: 5000, error: "+1: HTTP 400; +3: HTTP 429"
    })
  })
})

describe("e-mail", () => {
  const email = { recipients: ["a@example.com"], include_components: true } as const
  it("renders the subject template on one line, or uses the title", () => {
    expect(emailSubject({ ...email, subject_template: "{status_emoji} {component_name}\nin {stack_name}" }, message)).toBe("🔴 API in Payments")
    expect(emailSubject(email, message)).toBe(message.title)
    expect(emailSubject({ ...email, subject_template: "{incident_title}" }, message)).toBe(message.title)
  })

  it("derives a stable Message-ID from the key and the sender's domain", () => {
    expect(messageIdFor("d-1.2", "statusgrid <alerts@example.com>")).toBe("<d-1.2@example.com>")
    expect(messageIdFor("a:b", "alerts@example.com")).toBe(messageIdFor("a:b", "alerts@example.com"))
    expect(messageIdFor("a:b", "alerts@example.com")).toMatch(/^<[0-9a-f]{40}@example\.com>$/)
    expect(messageIdFor("a:c", "alerts@example.com")).not.toBe(messageIdFor("a:b", "alerts@example.com"))
  })

  it("toggles the component line and escapes HTML", () => {
    const m = sampleMessage({ title: "<script>x</script>" })
    expect(emailText(email, m)).toContain("API (Payments): operational → critical")
    expect(emailText({ ...email, include_components: false }, m)).not.toContain("API (Payments)")
    const html = emailHtml({ ...email, branding: { footer: "Acme & Co", accent_color: "#112233" } }, m)
    expect(html).toContain("&lt;script&gt;x&lt;/script&gt;")
    expect(html).not.toContain("<script>")
    expect(html).toContain("Acme &amp; Co")
    expect(html).toContain("#112233")
  })

  it("maps SMTP errors: 4xx and 503 retried, 5xx final, no reply retried, configuration final", () => {
    expect(smtpResult({ responseCode: 451, permanent: false, response: "451 4.7.1 Try later", command: "RCPT TO" }, 1000))
      .toEqual({ ok: false, status: 451, retryable: true, error: "SMTP RCPT TO: 451 4.7.1 Try later" })
    expect(smtpResult({ responseCode: 550, response: "550 No such user" }, 1000)).toMatchObject({ status: 550, retryable: false })
    expect(smtpResult({ responseCode: 503, permanent: false, response: "503 Bad sequence" }, 1000)).toMatchObject({ retryable: true })
    expect(smtpResult(Object.assign(new Error("Connection timeout"), { code: "ETIMEDOUT" }), 1000)).toMatchObject({ status: 0, retryable: true })
    expect(smtpResult(Object.assign(new Error("aborted"), { code: "EABORT" }), 1000)).toMatchObject({ retryable: true, error: "timeout after 1000 ms" })
    expect(smtpResult(Object.assign(new Error("Missing credentials"), { code: "ENOAUTH" }), 1000)).toMatchObject({ retryable: false })
  })
})

describe("settingsOf", () => {
  it("applies the schema's defaults", () => {
    const r = settingsOf("discord", { type: "discord", name: "d", settings: { webhook_url: "https://discord.com/api/webhooks/1/t" } as never })
    expect(Result.isSuccess(r) && r.success).toEqual({ webhook_url: "https://discord.com/api/webhooks/1/t", mention_roles: [], embed_color: "#5865f2" })
  })
  it("names the field of the first problem", () => {
    const r = settingsOf("pagerduty", { type: "pagerduty", name: "p", settings: {} as never })
    expect(Result.isFailure(r) && r.failure).toMatchObject({ ok: false, retryable: false, error: "invalid pagerduty settings: routing_key is required" })
  })
})
