import { Effect, Schema } from "effect"
import type { Snapshot, SnapshotIncident } from "../../domain/Snapshot.ts"
import type { ComponentStatus, IncidentImpact } from "../../domain/Status.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { type Feed, feed, type FeedItem } from "../feed.ts"
import { countsForSource, incidentSnapshot, isoOrNull, lookup, worstComponent } from "../normalize.ts"
import { joinUrl, json } from "../text.ts"
import { hostIs } from "../hosts.ts"

/**
 * The AWS Health Dashboard. Its RSS feed (`/rss/all.rss`) is history: one
 * item per update, guid `<link>#<service>[-<region>]_<unixts>`, severity in
 * the title prefix. Items are grouped per service-region and only the last
 * three days are read (Checkmk's rule). A source added with the JSON
 * `/public/currentevents` URL (open events, UTF-16) is read by
 * `parseAwsCurrentEvents` instead.
 */

const provider = "aws"
const feedPath = "/rss/all.rss"
const currentEventsPath = "/public/currentevents"
const recentMs = 3 * 24 * 60 * 60 * 1000
const hosts = ["status.aws.amazon.com", "health.aws.amazon.com"]

type Level = "ok" | "minor" | "critical"

const titleLevels: Record<string, Level> = {
  "Service is operating normally": "ok",
  OK: "ok",
  "Informational message": "minor",
  "Performance issues": "minor",
  "Service disruption": "critical"
}
/** Current-events codes; the numbers are third parties' reading, AWS documents none. */
const eventLevels: Record<string, Level> = { "0": "ok", "1": "minor", "2": "minor", "3": "critical" }
const levelImpacts: Record<Level, IncidentImpact> = { ok: "none", minor: "minor", critical: "critical" }
const levelStatuses: Record<Level, ComponentStatus> = { ok: "operational", minor: "degraded", critical: "critical" }

const serviceNames: Record<string, string> = {
  apigateway: "Amazon API Gateway",
  billingconsole: "AWS Billing Console",
  cloudfront: "Amazon CloudFront",
  cloudwatch: "Amazon CloudWatch",
  console: "AWS Management Console",
  dynamodb: "Amazon DynamoDB",
  ec2: "Amazon EC2",
  ecs: "Amazon ECS",
  eks: "Amazon EKS",
  elb: "Elastic Load Balancing",
  iam: "AWS Identity and Access Management",
  lambda: "AWS Lambda",
  multipleservices: "Multiple services",
  rds: "Amazon RDS",
  route53: "Amazon Route 53",
  s3: "Amazon S3",
  sns: "Amazon SNS",
  sqs: "Amazon SQS"
}

/** The display name of a service id; the id itself when unknown (an own key only: `valueOf` is a service id too). */
const serviceName = (service: string): string => Object.hasOwn(serviceNames, service) ? serviceNames[service]! : service

const regionPattern = /^[a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d+$/
const serviceRegion = /^(.+?)-([a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d+)$/

/** "rds-us-east-1" → rds in us-east-1; "billingconsole" → global (null region). */
const splitServiceId = (id: string): { readonly service: string; readonly region: string | null } => {
  const match = serviceRegion.exec(id)
  return match ? { service: match[1]!, region: match[2]! } : { service: id, region: null }
}

const componentName = (serviceName: string, region: string | null): string => `${serviceName} (${region ?? "Global"})`

const endpoints = (source: SourceConfig): ReadonlyArray<string> => {
  const path = new URL(source.url).pathname
  return [path.endsWith(".rss") || path.endsWith(currentEventsPath) ? source.url : joinUrl(source.url, feedPath)]
}

/** An incident and what it does to each service-region it names. */
interface Row {
  readonly incident: SnapshotIncident
  readonly affected: ReadonlyArray<{ readonly id: string; readonly name: string; readonly region: string | null; readonly level: Level }>
}

/** Components are the service-regions named by kept incidents; a status comes only from open incidents that count. */
const toSnapshot = (rows: ReadonlyArray<Row>, source: SourceConfig, now: Date, warnings: Array<string>): Snapshot => {
  const sorted = rows.toSorted((a, b) => Date.parse(b.incident.created_at) - Date.parse(a.incident.created_at))
  const incidents = sorted.map((r) => r.incident)
  const counted = sorted.filter((r) => r.incident.resolved_at === null && countsForSource(r.incident, source.regions, now))
  const named = new Map<string, { readonly name: string; readonly region: string | null }>()
  for (const row of sorted) for (const a of row.affected) if (!named.has(a.id)) named.set(a.id, a)
  const components = [...named]
    .toSorted(([, a], [, b]) => a.name.localeCompare(b.name))
    .map(([id, { name, region }], position) => ({
      id,
      name,
      description: "",
      status: worstComponent(counted.flatMap((r) => r.affected.filter((a) => a.id === id).map((a) => levelStatuses[a.level]))),
      parent_id: null,
      is_group: false,
      position,
      region
    }))
  const filter = source.regions ?? []
  const known = filter.length > 0 ? filter : [...new Set(components.flatMap((c) => (c.region === null ? [] : [c.region])))]
  return incidentSnapshot({ provider, components, incidents, knownRegions: known, sourceRegions: source.regions, now, warnings })
}

interface Entry {
  readonly serviceId: string
  readonly stamp: string
  readonly time: number
  readonly level: Level
  readonly headline: string
  readonly link: string
  /** The item's text: one update of the incident. */
  readonly body: string
}

/** `…#rds-us-east-1_1676072880`: a service-region id and the item's epoch seconds. */
const guidPattern = /#([a-z0-9-]+)_(\d{9,10})$/i

const toEntry = (item: FeedItem, warnings: Array<string>): Entry | null => {
  const guid = guidPattern.exec(item.id)
  if (!guid) {
    warnings.push(`AWS item without a service guid ${JSON.stringify(item.id)}, skipped`)
    return null
  }
  const colon = item.title.indexOf(":")
  const prefix = colon > 0 ? item.title.slice(0, colon) : item.title
  return {
    serviceId: guid[1]!,
    stamp: guid[2]!,
    time: item.published !== null ? Date.parse(item.published) : Number(guid[2]) * 1000,
    level: lookup<Level>(titleLevels, prefix, "minor", warnings, "AWS title prefix"),
    headline: item.title.slice(colon + 1).trim().replace(/^\[RESOLVED\]\s*/i, ""),
    link: item.link,
    body: item.summary
  }
}

/** Splits one service-region's entries (oldest first) into runs, each closed by an "operating normally" entry. */
const runsOf = (entries: ReadonlyArray<Entry>): Array<Array<Entry>> => {
  const runs: Array<Array<Entry>> = []
  let current: Array<Entry> = []
  for (const entry of entries) {
    current.push(entry)
    if (entry.level === "ok") {
      runs.push(current)
      current = []
    }
  }
  if (current.length > 0) runs.push(current)
  return runs
}

const runToRow = (run: ReadonlyArray<Entry>): Row => {
  const first = run[0]!
  const last = run.at(-1)!
  const closed = last.level === "ok"
  // A run seen only through its recovery notice was still at least a degradation.
  const level = run.findLast((e) => e.level !== "ok")?.level ?? "minor"
  const { region, service } = splitServiceId(first.serviceId)
  return {
    incident: {
      id: `${first.serviceId}_${first.stamp}`,
      title: first.headline,
      status: closed ? "resolved" : "investigating",
      impact: levelImpacts[level],
      created_at: new Date(first.time).toISOString(),
      updated_at: new Date(last.time).toISOString(),
      resolved_at: closed ? new Date(last.time).toISOString() : null,
      update_count: run.length,
      components: [first.serviceId],
      url: last.link || null,
      region,
      // Each feed item of the run is one update; its guid stamp is its id.
      updates: run.map((e) => ({
        id: e.stamp,
        status: e.level === "ok" ? "resolved" as const : "investigating" as const,
        body: e.body,
        created_at: new Date(e.time).toISOString()
      }))
    },
    affected: [{ id: first.serviceId, name: componentName(serviceName(service), region), region, level: closed ? "ok" : level }]
  }
}

const feedToSnapshot = (doc: Feed, source: SourceConfig, now: Date): Snapshot => {
  const warnings: Array<string> = []
  const byService = new Map<string, Array<Entry>>()
  for (const item of doc.items) {
    const entry = toEntry(item, warnings)
    if (entry === null || Number.isNaN(entry.time) || now.getTime() - entry.time > recentMs) continue
    const entries = byService.get(entry.serviceId) ?? []
    entries.push(entry)
    byService.set(entry.serviceId, entries)
  }
  const rows = [...byService.values()].flatMap((entries) => runsOf(entries.toSorted((a, b) => a.time - b.time)).map(runToRow))
  return toSnapshot(rows, source, now, warnings)
}

const Code = Schema.Union([Schema.String, Schema.Number])
const Event = Schema.Struct({
  date: Code,
  arn: Schema.optional(Schema.String),
  status: Code,
  service: Schema.String,
  service_name: Schema.String,
  summary: Schema.String,
  event_log: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ timestamp: Code })))),
  impacted_services: Schema.optional(Schema.NullOr(Schema.Record(
    Schema.String,
    Schema.Struct({ service_name: Schema.String, current: Schema.optional(Code) })
  ))),
  impacted_service_status_changes: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
    service: Schema.String,
    service_name: Schema.String,
    current_status: Schema.optional(Code)
  }))))
})
type Event = typeof Event.Type

/** Epoch seconds, as a number or a numeric string, as ISO 8601. */
const epoch = (value: string | number): string | null => isoOrNull(value === "" ? null : Number(value))

/** The event's own service and every impacted one, once each, with its current level. */
const affectedOf = (event: Event, region: string | null, warnings: Array<string>): Row["affected"] => {
  const listed = [
    { service: event.service, name: event.service_name, code: event.status },
    ...Object.entries(event.impacted_services ?? {}).map(([service, s]) => ({ service, name: s.service_name, code: s.current ?? event.status })),
    ...(event.impacted_service_status_changes ?? []).map((c) => ({ service: c.service, name: c.service_name, code: c.current_status ?? event.status }))
  ]
  return listed
    .filter((a, i) => listed.findIndex((b) => b.service === a.service) === i)
    .map((a) => {
      const own = splitServiceId(a.service).region ?? region
      const level = lookup<Level>(eventLevels, a.code, "minor", warnings, "AWS service status")
      return { id: a.service, name: componentName(a.name, own), region: own, level }
    })
}

const eventToRow = (event: Event, warnings: Array<string>): Row | null => {
  const createdAt = epoch(event.date)
  if (createdAt === null) {
    warnings.push(`AWS event ${event.arn ?? event.service} has an unreadable date ${JSON.stringify(event.date)}, skipped`)
    return null
  }
  const level = lookup<Level>(eventLevels, event.status, "minor", warnings, "AWS event status")
  const arnRegion = event.arn?.split(":")[3] ?? ""
  const region = regionPattern.test(arnRegion) ? arnRegion : splitServiceId(event.service).region
  const stamps = (event.event_log ?? []).map((e) => epoch(e.timestamp)).filter((t): t is string => t !== null)
  const updatedAt = [createdAt, ...stamps].toSorted().at(-1)!
  const affected = affectedOf(event, region, warnings)
  return {
    incident: {
      id: event.arn ?? `${event.service}_${event.date}`,
      title: event.summary,
      status: level === "ok" ? "resolved" : "investigating",
      impact: levelImpacts[level],
      created_at: createdAt,
      updated_at: updatedAt,
      resolved_at: level === "ok" ? updatedAt : null,
      update_count: event.event_log?.length ?? 0,
      components: affected.map((a) => a.id),
      url: null,
      region
    },
    affected
  }
}

const primaryOf = (fetched: ReadonlyArray<Fetched>, source: SourceConfig) =>
  fetched[0] === undefined
    ? Effect.fail(new AdapterError({ provider, url: source.url, reason: "invalid_shape", message: "no document was fetched" }))
    : Effect.succeed(fetched[0])

/** `/public/currentevents`: a JSON array of open events, served as UTF-16 (text.ts honours the BOM and charset). */
export const parseAwsCurrentEvents = Effect.fnUntraced(function*(fetched: ReadonlyArray<Fetched>, source: SourceConfig, now: Date) {
  const primary = yield* primaryOf(fetched, source)
  const body = yield* json(provider, primary)
  const events = yield* Schema.decodeUnknownEffect(Schema.Array(Event))(body).pipe(
    Effect.mapError((error) =>
      new AdapterError({ provider, url: primary.url, reason: "invalid_shape", message: `not AWS current events: ${error.message}` })
    )
  )
  const warnings: Array<string> = []
  const rows = events.map((e) => eventToRow(e, warnings)).filter((r): r is Row => r !== null)
  return toSnapshot(rows, source, now, warnings)
})

const parseAwsFeed = Effect.fnUntraced(function*(fetched: ReadonlyArray<Fetched>, source: SourceConfig, now: Date) {
  const primary = yield* primaryOf(fetched, source)
  return feedToSnapshot(yield* feed(provider, primary), source, now)
})

const isAwsUrl = (url: string): boolean => URL.canParse(url) && hosts.some((h) => hostIs(new URL(url).hostname, h))

export const aws = {
  id: provider,
  name: "AWS Health Dashboard",
  endpoints,
  parse: (fetched, source, now) =>
    new URL(source.url).pathname.endsWith(currentEventsPath)
      ? parseAwsCurrentEvents(fetched, source, now)
      : parseAwsFeed(fetched, source, now),
  detect: {
    host: (url) => hosts.some((h) => hostIs(url.hostname, h)),
    feed: (doc) => isAwsUrl(doc.link) || (doc.items.length > 0 && doc.items.every((i) => guidPattern.test(i.id)))
  }
} as const satisfies Adapter
