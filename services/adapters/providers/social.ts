import { Effect } from "effect"
import type { Snapshot, SnapshotIncident } from "../../domain/Snapshot.ts"
import type { IncidentImpact } from "../../domain/Status.ts"
import type { Adapter, SourceConfig } from "../Adapter.ts"
import type { Feed, FeedItem } from "../feed.ts"
import { effectiveStatus } from "../normalize.ts"
import { datedItems, describeStatus, primaryFeed } from "./rss.ts"

/**
 * A public account's feed (Mastodon `https://<instance>/@<user>.rss`, Bluesky
 * `https://bsky.app/profile/<handle>/rss`) read as incident signals: posts
 * matching problem keywords open one, a post saying it is resolved closes it.
 */

const defaultKeywords = [
  "outage",
  "down",
  "degraded",
  "incident",
  "investigating",
  "disruption",
  "issues",
  "errors",
  "latency",
  "maintenance",
  "resolved",
  "restored"
]
// Always closes a signal, whatever `keywords` says: the option picks which posts open one.
const resolution = /\b(?:resolved|restored|fixed|back up)\b/i
const severe = /\b(?:outages?|down)\b/i
const planned = /\bmaintenance\b/i

const hourMs = 60 * 60 * 1000
/** An unresolved signal quiet for longer has expired: accounts rarely post every all-clear. */
const expiryMs = 24 * hourMs
const keepResolvedMs = 30 * 24 * hourMs

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Posts that open a signal: any keyword (comma-separated `options.keywords`, else the defaults), plurals included. */
const keywordPattern = (source: SourceConfig): RegExp => {
  const custom = (source.options?.["keywords"] ?? "").split(",").map((k) => k.trim()).filter((k) => k !== "")
  const words = custom.length > 0 ? custom : defaultKeywords
  return new RegExp(`\\b(?:${words.map(escapeRegExp).join("|")})(?:s|es)?\\b`, "i")
}

interface Post {
  readonly item: FeedItem
  readonly at: number
  /** Mastodon and Bluesky posts have no title (old Bluesky feeds a generic one): the text is the summary. */
  readonly text: string
}

interface Signal {
  readonly posts: Array<Post>
  resolvedAt: number | null
}

const toSignals = (posts: ReadonlyArray<Post>, keywords: RegExp): Array<Signal> => {
  const signals: Array<Signal> = []
  let open: Signal | null = null
  for (const post of posts) {
    if (open !== null && post.at - open.posts[open.posts.length - 1]!.at > expiryMs) open = null
    if (resolution.test(post.text)) {
      if (open !== null) {
        open.posts.push(post)
        open.resolvedAt = post.at
        open = null
      }
    } else if (keywords.test(post.text)) {
      // Follow-ups while a signal is open are its updates: accounts narrate one problem at a time.
      if (open === null) {
        open = { posts: [], resolvedAt: null }
        signals.push(open)
      }
      open.posts.push(post)
    }
  }
  return signals
}

const impactOf = (signal: Signal): IncidentImpact => {
  const problems = signal.posts.filter((p) => !resolution.test(p.text))
  if (problems.some((p) => severe.test(p.text))) return "critical"
  return problems.every((p) => planned.test(p.text)) ? "maintenance" : "minor"
}

const iso = (ms: number): string => new Date(ms).toISOString()

const toIncident = (signal: Signal): SnapshotIncident => {
  const first = signal.posts[0]!
  const last = signal.posts[signal.posts.length - 1]!
  return {
    id: first.item.id,
    title: first.text.slice(0, 120).trim(),
    status: signal.resolvedAt === null ? "investigating" : "resolved",
    impact: impactOf(signal),
    created_at: iso(first.at),
    updated_at: iso(last.at),
    resolved_at: signal.resolvedAt === null ? null : iso(signal.resolvedAt),
    update_count: signal.posts.length,
    components: [],
    url: first.item.link || null,
    region: null
  }
}

const toSnapshot = (doc: Feed, source: SourceConfig, now: Date): Snapshot => {
  const warnings: Array<string> = []
  // feed.ts gives a post's HTML as text, entities decoded (Mastodon writes `&#39;`): decoding again would turn `&lt;` typed by a user into `<`.
  const posts = datedItems(doc, warnings).map(({ at, item }) => ({ item, at, text: item.summary || item.title }))
  const incidents = toSignals(posts, keywordPattern(source))
    .filter((s) =>
      s.resolvedAt === null
        ? now.getTime() - s.posts[s.posts.length - 1]!.at <= expiryMs
        : now.getTime() - s.resolvedAt <= keepResolvedMs
    )
    .map(toIncident)
    .toSorted((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
  const status = effectiveStatus({ reported: null, components: [], incidents, maintenances: [], now })
  return {
    provider: "social",
    status,
    reported_status: null,
    description: describeStatus(status, incidents),
    components: [],
    incidents,
    maintenances: [],
    regions: [],
    warnings
  }
}

const isBluesky = (url: URL): boolean => url.hostname === "bsky.app" || url.hostname.endsWith(".bsky.app")
const blueskyFeedPath = /^\/profile\/[^/]+\/rss\/?$/
const blueskyProfilePath = /^\/profile\/[^/]+\/?$/
/** A Mastodon profile, `https://<instance>/@<user>` (remote accounts: `@user@domain`). */
const mastodonProfilePath = /^\/@\w+(?:@[\w.-]+)?\/?$/

/** Whether a feed's channel link is an account profile on Mastodon or Bluesky. */
const isProfileLink = (link: string): boolean => {
  if (!URL.canParse(link)) return false
  const url = new URL(link)
  if (url.protocol !== "https:" && url.protocol !== "http:") return false
  return isBluesky(url) ? blueskyProfilePath.test(url.pathname) : mastodonProfilePath.test(url.pathname)
}

export const social = {
  id: "social",
  name: "Social announcements",
  endpoints: (source) => [source.url],
  parse: (fetched, source, now) => Effect.map(primaryFeed("social", fetched, source), (doc) => toSnapshot(doc, source, now)),
  detect: {
    host: (url) => isBluesky(url) && blueskyFeedPath.test(url.pathname),
    feed: (doc) => isProfileLink(doc.link)
  }
} as const satisfies Adapter
