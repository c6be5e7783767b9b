import { Effect, Schema } from "effect"
import type { Adapter } from "./Adapter.ts"
import { type Feed, parseFeedText } from "./feed.ts"
import { Fetcher } from "./Fetcher.ts"
import { adapters, type ProviderId } from "./registry.ts"
import { decodeText, joinUrl, looksLikeHtml } from "./text.ts"

export class DetectError extends Schema.TaggedError<DetectError>()("DetectError", {
  url: Schema.String,
  message: Schema.String,
  /** The address guard refused the page (it, or a redirect, leads to a private address): no type makes it readable. */
  refused: Schema.optional(Schema.Boolean)
}) {}

export interface Detected {
  readonly provider: ProviderId
  /** Which step recognised it. */
  readonly by: "host" | "probe" | "html" | "feed" | "fallback"
  /** The URL to read the source from (the feed's own URL when found by autodiscovery). */
  readonly url: string
}

/** Common feed locations tried after <link rel="alternate"> autodiscovery. */
const feedPaths = ["/history.atom", "/history.rss", "/feed.rss", "/feed.atom", "/en/feed.atom", "/_rss", "/rss/all.rss", "/en-us/status/feed/"]

const probeTimeoutMs = 5_000

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

const tryFeed = (text: string): Feed | undefined => {
  try {
    return parseFeedText(text)
  } catch {
    return undefined
  }
}

/** `<link rel="alternate" type="application/rss+xml|atom+xml" href="...">` targets, absolute. */
export const feedLinks = (html: string, pageUrl: string): Array<string> => {
  const out: Array<string> = []
  for (const tag of html.match(/<link\b[^>]*>/gi) ?? []) {
    if (!/rel\s*=\s*["']?alternate/i.test(tag) || !/type\s*=\s*["']?application\/(rss|atom)\+xml/i.test(tag)) continue
    const href = /href\s*=\s*["']([^"']+)["']/i.exec(tag)?.[1]
    if (!href) continue
    try {
      out.push(new URL(href.replace(/&amp;/g, "&"), pageUrl).toString())
    } catch {
      // an unusable href is skipped
    }
  }
  return out
}

/** The first feed provider (registry order) that claims `feed`. */
const classify = (feedUrl: string, feed: Feed): Detected | undefined => {
  const provider = adapters.find((a: Adapter) => a.detect.feed?.(feed))
  return provider ? { provider: provider.id, by: "feed", url: feedUrl } : undefined
}

const first = <A>(candidates: ReadonlyArray<A | undefined>): A | undefined => candidates.find((c) => c !== undefined)

export interface DetectOptions {
  /** The operator's own URL (a catalog source): fetched without the address guard (decision 0009). */
  readonly trusted?: boolean
}

/** What a URL answered: its status and body as text. */
interface Answer {
  readonly status: number
  readonly text: string
}

/** Statuses that say the URL names nothing: not a health endpoint that is down, a wrong URL. */
const absent = new Set([404, 410])

/**
 * Which provider reads a status page URL: its known hosts, then JSON probes
 * validated by shape (the earliest adapter in registry order wins), then HTML
 * markers, then a feed (the URL itself, autodiscovered, or at a common path)
 * classified by the feed providers, and finally a plain HTTP health check
 * when the page answers at all (otherwise a DetectError: try again later).
 *
 * Shapes are validated whatever the HTTP status (decision 0004): a health
 * endpoint answering 503 with a failing JSON body is detected while it
 * fails, and reads as down. Only a page that gives no HTTP answer, or
 * answers 404/410 with nothing recognisable, is a DetectError.
 */
export const detect = Effect.fn("detect")(function*(input: string, options: DetectOptions = {}) {
  const url = yield* Effect.try({
    try: () => new URL(input),
    catch: () => new DetectError({ url: input, message: "not a valid URL" })
  })
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return yield* new DetectError({ url: input, message: "only http and https URLs can be status pages" })
  }
  const byHost = adapters.find((a: Adapter) => a.detect.host?.(url))
  if (byHost) return { provider: byHost.id, by: "host", url: input } satisfies Detected

  const fetcher = yield* Fetcher
  const getOptions = { timeoutMs: probeTimeoutMs, trusted: options.trusted === true }
  const answer = (target: string) =>
    fetcher.get(target, getOptions).pipe(
      Effect.map((f): Answer => ({ status: f.status, text: decodeText(f.body, f.contentType) }))
    )
  const get = (target: string) =>
    answer(target).pipe(Effect.map((a): string | undefined => a.text), Effect.orElseSucceed(() => undefined))

  const [pageAnswer, ...probed] = yield* Effect.all(
    [
      answer(input).pipe(Effect.result),
      ...adapters.map((a: Adapter) => a.detect.probe ? get(joinUrl(input, a.detect.probe.path)) : Effect.succeed(undefined))
    ],
    { concurrency: "unbounded" }
  )

  const page = pageAnswer._tag === "Success" ? pageAnswer.success.text : undefined
  // The page itself may be the JSON document (a URL given down to the API path).
  const pageJson = page !== undefined && !looksLikeHtml(page) ? parseJson(page) : undefined
  const byProbe = adapters.find((a: Adapter, i) => {
    const probe = a.detect.probe
    if (!probe) return false
    const body = probed[i]
    const json = body !== undefined && !looksLikeHtml(body) ? parseJson(body) : undefined
    return (json !== undefined && probe.accepts(json)) || (pageJson !== undefined && probe.accepts(pageJson))
  })
  if (byProbe) return { provider: byProbe.id, by: "probe", url: input } satisfies Detected

  if (page !== undefined && looksLikeHtml(page)) {
    const byHtml = adapters.find((a: Adapter) => a.detect.html?.(page))
    if (byHtml) return { provider: byHtml.id, by: "html", url: input } satisfies Detected
  }

  const pageFeed = page !== undefined && !looksLikeHtml(page) ? tryFeed(page) : undefined
  if (pageFeed) {
    const found = classify(input, pageFeed)
    if (found) return found
  }
  const candidates = [
    ...(page !== undefined && looksLikeHtml(page) ? feedLinks(page, input) : []),
    ...feedPaths.map((p) => joinUrl(input, p))
  ]
  const feeds = yield* Effect.all(
    candidates.map((c) => get(c).pipe(Effect.map((text) => (text !== undefined ? tryFeed(text) : undefined)))),
    { concurrency: 4 }
  )
  const byFeed = first(feeds.map((f, i) => (f ? classify(candidates[i]!, f) : undefined)))
  if (byFeed) return byFeed

  // A plain health check only for a page that answers: an unreachable URL is not a health endpoint that is down.
  if (pageAnswer._tag === "Failure") {
    const { message, refused } = pageAnswer.failure
    return yield* new DetectError({ url: input, message: `the page did not answer: ${message}`, ...(refused ? { refused } : {}) })
  }
  if (absent.has(pageAnswer.success.status)) {
    return yield* new DetectError({
      url: input,
      message: `the page answered ${pageAnswer.success.status} and nothing there is a status document`
    })
  }
  return { provider: "health_check", by: "fallback", url: input } satisfies Detected
})
