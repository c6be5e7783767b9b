import { Effect } from "effect"
import type { Snapshot, SnapshotComponent, SnapshotIncident } from "../../domain/Snapshot.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { type Feed, feed, type FeedItem } from "../feed.ts"
import { countsForSource, impactToSource, incidentSnapshot, sourceToComponent, worstComponent } from "../normalize.ts"
import { joinUrl } from "../text.ts"
import { hostIs } from "../hosts.ts"

/**
 * Azure's status RSS feed lists current issues only: an empty channel is
 * healthy. Items carry no severity and no components, so each is a degraded
 * incident, placed in the first Azure region its text names (none = global).
 */

const provider = "azure"
const feedPath = "/en-us/status/feed/"
/** The feed holds current issues; anything older is a stale item, not an outage. */
const recentMs = 3 * 24 * 60 * 60 * 1000
const hosts = ["azure.status.microsoft", "status.azure.com", "azurestatuscdn.azureedge.net"]
/** The component of issues that name no region. */
const globalComponent = { id: "azure", name: "Azure" }

/** Region display names as Azure writes them in titles and categories, with their ids. */
export const azureRegionNames: Readonly<Record<string, string>> = {
  "East US": "eastus",
  "East US 2": "eastus2",
  "West US": "westus",
  "West US 2": "westus2",
  "West US 3": "westus3",
  "Central US": "centralus",
  "North Central US": "northcentralus",
  "South Central US": "southcentralus",
  "West Central US": "westcentralus",
  "Canada Central": "canadacentral",
  "Brazil South": "brazilsouth",
  "North Europe": "northeurope",
  "West Europe": "westeurope",
  "UK South": "uksouth",
  "France Central": "francecentral",
  "Germany West Central": "germanywestcentral",
  "Sweden Central": "swedencentral",
  "Switzerland North": "switzerlandnorth",
  "East Asia": "eastasia",
  "Southeast Asia": "southeastasia",
  "Japan East": "japaneast",
  "Korea Central": "koreacentral",
  "Central India": "centralindia",
  "Australia East": "australiaeast",
  "UAE North": "uaenorth",
  "South Africa North": "southafricanorth"
}
const regionIds = new Map(Object.entries(azureRegionNames).map(([name, id]) => [name.toLowerCase(), id]))
const regionNamesById = new Map(Object.entries(azureRegionNames).map(([name, id]) => [id, name]))

// Longest names first, and no digit may follow, so "East US 2" is never read as "East US".
const regionMention = new RegExp(
  `\\b(${Object.keys(azureRegionNames).toSorted((a, b) => b.length - a.length).join("|")})\\b(?!\\s*\\d)`,
  "i"
)


/** A page URL's feed: `/<locale>/status` gets `/feed/`; a URL that already is the feed is kept. */
const endpoints = (source: SourceConfig): ReadonlyArray<string> => {
  const url = new URL(source.url)
  if (url.pathname.includes("/status/feed")) return [source.url]
  if (/\/[a-z]{2}-[a-z]{2}\/status\/?$/i.test(url.pathname)) return [joinUrl(source.url, "/feed/")]
  return [joinUrl(source.url, feedPath)]
}

const regionOf = (item: FeedItem): string | null => {
  for (const text of [...item.categories, item.title, item.summary]) {
    const match = regionMention.exec(text)
    if (match) return regionIds.get(match[1]!.toLowerCase())!
  }
  return null
}

const toIncident = (item: FeedItem, now: Date): SnapshotIncident => {
  const region = regionOf(item)
  const createdAt = item.published ?? now.toISOString()
  return {
    id: item.id || `${item.link}#${item.title}`,
    title: item.title,
    status: "investigating",
    impact: "minor",
    created_at: createdAt,
    updated_at: item.updated ?? createdAt,
    resolved_at: null,
    update_count: 1,
    components: [region ?? globalComponent.id],
    url: item.link || null,
    region
  }
}

/**
 * One component per region of the source's filter or named by an issue, and
 * the global "Azure" one when an issue names no region or nothing is known.
 */
const toComponents = (
  incidents: ReadonlyArray<SnapshotIncident>,
  source: SourceConfig,
  now: Date
): Array<SnapshotComponent> => {
  const regions = [...new Set([...(source.regions ?? []), ...incidents.flatMap((i) => (i.region === null ? [] : [i.region]))])]
  const entries: Array<{ id: string; name: string; region: string | null }> = regions.map((id) => ({
    id,
    name: regionNamesById.get(id) ?? id,
    region: id
  }))
  if (entries.length === 0 || incidents.some((i) => i.region === null)) entries.push({ ...globalComponent, region: null })
  const counted = incidents.filter((i) => countsForSource(i, source.regions, now))
  return entries.map((e, position) => ({
    ...e,
    description: "",
    status: worstComponent(counted.filter((i) => i.components.includes(e.id)).map((i) => sourceToComponent(impactToSource(i.impact)))),
    parent_id: null,
    is_group: false,
    position
  }))
}

const toSnapshot = (doc: Feed, source: SourceConfig, now: Date): Snapshot => {
  const incidents = doc.items
    .filter((item) => item.published === null || now.getTime() - Date.parse(item.published) <= recentMs)
    .map((item) => toIncident(item, now))
    .toSorted((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
  const components = toComponents(incidents, source, now)
  return incidentSnapshot({
    provider,
    components,
    incidents,
    knownRegions: source.regions ?? [],
    sourceRegions: source.regions,
    now,
    warnings: []
  })
}

const parse = Effect.fnUntraced(function*(fetched: ReadonlyArray<Fetched>, source: SourceConfig, now: Date) {
  const primary = fetched[0]
  if (primary === undefined) {
    return yield* new AdapterError({ provider, url: source.url, reason: "invalid_shape", message: "no feed was fetched" })
  }
  return toSnapshot(yield* feed(provider, primary), source, now)
})

const isAzureHost = (hostname: string): boolean => hosts.some((h) => hostIs(hostname, h))

export const azure = {
  id: provider,
  name: "Azure status",
  endpoints,
  parse,
  detect: {
    host: (url) => isAzureHost(url.hostname),
    feed: (doc) => URL.canParse(doc.link) && isAzureHost(new URL(doc.link).hostname)
  }
} as const satisfies Adapter
