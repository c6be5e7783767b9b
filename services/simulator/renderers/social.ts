import type { IncidentImpact, IncidentStatus } from "../../domain/Status.ts"
import { joinUrl } from "../../adapters/text.ts"
import { escapeXml, htmlPage, type Renderer, type SimIncident, type SimSource, xml } from "../Model.ts"
import { fnv1a } from "../../platform/Prng.ts"
import { rfc822 } from "./rss.ts"

/**
 * A status account's Mastodon RSS (`/@status.rss`): one post per incident
 * update, newest first, as HTML descriptions without titles. The channel link
 * is the account's profile on mastodon.social, which is how detection knows
 * the feed for a social one.
 */

const feedPath = "/@status.rss"
/** Mastodon serves the 20 latest public posts. */
const postLimit = 20

const accountOf = (source: SimSource): string => `${source.key.replace(/[^A-Za-z0-9_]/g, "")}status`
const profileOf = (source: SimSource): string => `https://mastodon.social/@${accountOf(source)}`

// Words the social adapter keys on: "outage" reads critical, the others minor.
const impactWords: Record<IncidentImpact, string> = {
  none: "minor issues",
  minor: "degraded performance",
  major: "degraded service",
  critical: "outage",
  maintenance: "maintenance"
}

const statusLabels: Record<IncidentStatus, string> = {
  investigating: "Investigating",
  identified: "Identified",
  monitoring: "Monitoring",
  resolved: "Resolved",
  postmortem: "Resolved"
}

interface Post {
  readonly id: string
  readonly at: Date
  readonly text: string
  readonly incident: SimIncident
}

const postsOf = (incident: SimIncident): Array<Post> => {
  const updates = incident.updates.length > 0
    ? incident.updates
    : [{ id: incident.id, status: incident.status, body: "", created_at: incident.created_at }]
  return updates.map((u) => {
    const closing = u.status === "resolved" || u.status === "postmortem"
    const lead = closing
      ? `${statusLabels[u.status]}: ${incident.title}.`
      : `${statusLabels[u.status]}: ${incident.title} (${impactWords[incident.impact]}).`
    return { id: u.id, at: u.created_at, text: u.body ? `${lead} ${u.body}` : lead, incident }
  })
}

/** A Mastodon snowflake id: milliseconds in the high bits, a per-post sequence below. */
const snowflake = (post: Post): string => ((BigInt(post.at.getTime()) << 16n) + BigInt(fnv1a(post.id) & 0xffff)).toString()

const item = (source: SimSource, post: Post): string => {
  const url = `${profileOf(source)}/${snowflake(post)}`
  const incidentUrl = joinUrl(source.baseUrl, `/incidents/${post.incident.id}`)
  const html = `<p>${escapeXml(post.text)}</p>` +
    `<p><a href="${escapeXml(incidentUrl)}" rel="nofollow noopener" target="_blank">${escapeXml(incidentUrl)}</a></p>`
  return `    <item>\n` +
    `      <guid isPermaLink="true">${url}</guid>\n` +
    `      <link>${url}</link>\n` +
    `      <pubDate>${rfc822(post.at)}</pubDate>\n` +
    `      <description>${escapeXml(html)}</description>\n` +
    `    </item>\n`
}

const feed = (source: SimSource): string => {
  const posts = source.incidents.flatMap(postsOf)
    .toSorted((a, b) => b.at.getTime() - a.at.getTime() || a.id.localeCompare(b.id))
    .slice(0, postLimit)
  const account = accountOf(source)
  const title = `${escapeXml(source.name)} Status (@${account}@mastodon.social)`
  const avatar = `https://files.mastodon.social/accounts/avatars/000/000/${fnv1a(account) % 1000}/original/avatar.png`
  return `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<rss version="2.0" xmlns:webfeeds="http://webfeeds.org/rss/1.0" xmlns:media="http://search.yahoo.com/mrss/">\n  <channel>\n` +
    `    <title>${title}</title>\n` +
    `    <description>Public posts from @${account}@mastodon.social</description>\n` +
    `    <link>${profileOf(source)}</link>\n` +
    `    <image>\n      <url>${avatar}</url>\n      <title>${title}</title>\n      <link>${profileOf(source)}</link>\n    </image>\n` +
    `    <lastBuildDate>${rfc822(posts[0]?.at ?? source.updatedAt)}</lastBuildDate>\n` +
    `    <webfeeds:icon>${avatar}</webfeeds:icon>\n` +
    `    <generator>Mastodon v4.3.2</generator>\n` +
    posts.map((p) => item(source, p)).join("") +
    `  </channel>\n</rss>\n`
}

export const socialRenderer: Renderer = {
  provider: "social",
  routes: { [feedPath]: (source) => xml(feed(source)) },
  page: (source) =>
    htmlPage(
      `${source.name} Status (@${accountOf(source)}@mastodon.social)`,
      `<link rel="alternate" type="application/rss+xml" href="${escapeXml(joinUrl(source.baseUrl, feedPath))}">`,
      `<p>Service announcements from ${escapeXml(source.name)}.</p>`
    )
}
