import { createHash } from "node:crypto"
import { Result } from "effect"
import { createTransport } from "nodemailer"
import type { NodemailerError } from "nodemailer/lib/errors"
import type { EmailSettings } from "../../domain/Channel.ts"
import type { Message, SendResult, Sender } from "../Sender.ts"
import { renderTemplate, templateVars } from "../template.ts"
import { failure, ok } from "./http.ts"
import { settingsOf } from "./settings.ts"
import { escapeHtml } from "./text.ts"

/**
 * E-mail over SMTP with nodemailer: one message to all recipients, plain
 * text and HTML. The Message-ID is derived from the idempotency key, so every
 * attempt of a delivery carries the same one and mail systems can drop copies.
 */

export interface EmailOptions {
  /** SMTP_URL: `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://...:465`. Unset: e-mail fails, not retried. */
  readonly smtpUrl?: string
  /** SMTP_FROM: the From address, `alerts@example.com` or `statusgrid <alerts@example.com>`. Required with smtpUrl. */
  readonly smtpFrom?: string
  /** Longest wait to connect and for each server reply; the attempt's timeoutMs bounds the whole send. Default 10,000. */
  readonly smtpTimeoutMs?: number
}

type Settings = typeof EmailSettings.Type

/** The address part of `Name <addr>` or `addr`, and its domain. */
const domainOf = (from: string): string => {
  const address = /<([^>]+)>\s*$/.exec(from)?.[1] ?? from
  return address.slice(address.lastIndexOf("@") + 1).trim() || "statusgrid.invalid"
}

/** `<key@domain>` when the key is a valid dot-atom; otherwise a hash of it (same key, same id). */
export const messageIdFor = (idempotencyKey: string, from: string): string => {
  const local = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/.test(idempotencyKey) && idempotencyKey.length <= 64
    ? idempotencyKey
    : createHash("sha256").update(idempotencyKey).digest("hex").slice(0, 40)
  return `<${local}@${domainOf(from)}>`
}

/** The rendered subject template, or the message title; one line. */
export const emailSubject = (settings: Settings, message: Message): string => {
  const subject = settings.subject_template === undefined ? message.title : renderTemplate(settings.subject_template, templateVars(message))
  return subject.replace(/\s+/g, " ").trim() || message.title
}

const componentLine = (message: Message): string => {
  const { component, stack } = message.payload
  const status = component.previous_status === "" ? component.current_status : `${component.previous_status} → ${component.current_status}`
  return `${component.name} (${stack.name}): ${status}`
}

export const emailText = (settings: Settings, message: Message): string =>
  [
    message.title,
    "",
    message.text,
    ...(settings.include_components ? ["", componentLine(message)] : []),
    "",
    `Details: ${message.url}`,
    ...(settings.branding?.footer === undefined ? [] : ["", "-- ", settings.branding.footer])
  ].join("\n")

export const emailHtml = (settings: Settings, message: Message): string => {
  const accent = settings.branding?.accent_color ?? "#0078d4"
  const logo = settings.branding?.logo_url
  const paragraphs = message.text.split(/\n{2,}/).map((p) => `<p>${escapeHtml(p).replace(/\n/g, "<br>")}</p>`).join("\n")
  return [
    "<!doctype html>",
    `<html><body style="font-family:sans-serif;color:#222;border-top:4px solid ${accent};padding:12px">`,
    ...(logo === undefined ? [] : [`<img src="${escapeHtml(logo)}" alt="" style="max-height:40px">`]),
    `<h2>${escapeHtml(message.title)}</h2>`,
    paragraphs,
    ...(settings.include_components ? [`<p><strong>${escapeHtml(componentLine(message))}</strong></p>`] : []),
    `<p><a href="${escapeHtml(message.url)}" style="color:${accent}">View details</a></p>`,
    ...(settings.branding?.footer === undefined ? [] : [`<p style="color:#777;font-size:12px">${escapeHtml(settings.branding.footer)}</p>`]),
    "</body></html>"
  ].join("\n")
}

/**
 * An SMTP failure as a SendResult: a server reply is final when nodemailer
 * marks it permanent (5xx but 503) and retried otherwise (4xx); no reply
 * (connection refused, timeout, TLS) is retried; a configuration error is not.
 */
export const smtpResult = (error: unknown, timeoutMs: number): SendResult => {
  const e = (typeof error === "object" && error !== null ? error : {}) as NodemailerError
  const message = (e.response ?? e.message ?? String(error)).replace(/\s+/g, " ").trim()
  if (typeof e.responseCode === "number") {
    const permanent = e.permanent ?? e.responseCode >= 500
    return failure(e.responseCode, !permanent, `SMTP ${e.command === undefined ? "" : `${e.command}: `}${message}`)
  }
  if (e.code === "EABORT") return failure(0, true, `timeout after ${timeoutMs} ms`)
  if (e.code === "ECONFIG" || e.code === "ENOAUTH" || e.code === "EENVELOPE") return failure(0, false, `${e.code}: ${message}`)
  return failure(0, true, e.code === undefined ? message : `${e.code}: ${message}`)
}

/** One e-mail for people other than a channel's recipients (an invitation, a report): who, what, and the key of its Message-ID. */
export interface Mail {
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string
  readonly html?: string
  readonly idempotencyKey: string
  readonly timeoutMs: number
  readonly headers?: Readonly<Record<string, string>>
  /** Files sent with it (a report's CSV and PDF). */
  readonly attachments?: ReadonlyArray<{ readonly filename: string; readonly contentType: string; readonly content: Uint8Array | string }>
}

/** Sends one e-mail through the operator's SMTP server; never rejects (SMTP replies mapped as for channels). */
export type Mailer = (mail: Mail) => Promise<SendResult>

export const makeMailer = (options: EmailOptions = {}): Mailer => {
  const { smtpFrom, smtpUrl } = options
  const timeout = options.smtpTimeoutMs ?? 10_000
  // Not pooled: nodemailer connects per message, so there is nothing to close and an SMTP restart costs nothing.
  const transport = smtpUrl === undefined
    ? undefined
    : createTransport({ url: smtpUrl, connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout })
  return async (mail) => {
    if (transport === undefined || smtpFrom === undefined) {
      return failure(0, false, "e-mail is not configured: set SMTP_URL and SMTP_FROM")
    }
    try {
      const info = await transport.sendMail({
        from: smtpFrom,
        to: [...mail.to],
        subject: mail.subject,
        text: mail.text,
        ...(mail.html === undefined ? {} : { html: mail.html }),
        ...(mail.attachments === undefined ? {} : {
          attachments: mail.attachments.map((a) => ({
            filename: a.filename,
            contentType: a.contentType,
            content: typeof a.content === "string" ? a.content : Buffer.from(a.content)
          }))
        }),
        messageId: messageIdFor(mail.idempotencyKey, smtpFrom),
        headers: { "X-Idempotency-Key": mail.idempotencyKey, ...mail.headers },
        signal: AbortSignal.timeout(mail.timeoutMs)
      })
      // Some recipients refused, others accepted: done (a retry would mail the accepted ones again).
      return { ...ok, status: Number(/^\d{3}/.exec(info.response)?.[0] ?? 250) }
    } catch (error) {
      return smtpResult(error, mail.timeoutMs)
    }
  }
}

export const makeEmailSender = (options: EmailOptions = {}): Sender => {
  const mailer = makeMailer(options)
  return (destination, message, context) => {
    if (options.smtpUrl === undefined || options.smtpFrom === undefined) {
      return Promise.resolve(failure(0, false, "e-mail is not configured: set SMTP_URL and SMTP_FROM"))
    }
    const decoded = settingsOf("email", destination)
    if (Result.isFailure(decoded)) return Promise.resolve(decoded.failure)
    const settings = decoded.success
    return mailer({
      to: settings.recipients,
      subject: emailSubject(settings, message),
      text: emailText(settings, message),
      html: emailHtml(settings, message),
      idempotencyKey: context.idempotencyKey,
      timeoutMs: context.timeoutMs,
      headers: { "X-Statusgrid-Event": message.event }
    })
  }
}
