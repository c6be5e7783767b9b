import type { ProviderId } from "../adapters/registry.ts"
import type { CategoryId, CheckClass } from "../domain/Source.ts"
import { prng } from "../platform/Prng.ts"

/** The regions of the synthetic AWS and GCP sources (the simulator renders them too). */
export const awsRegions = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1", "ap-northeast-1"]
export const gcpRegions = ["us-central1", "us-east1", "europe-west1", "europe-west4", "asia-east1", "asia-northeast1"]

/**
 * The synthetic part of the catalog: sources that do not exist upstream and
 * are served by the simulator (`statusgrid simulate`). The same index always
 * gives the same source, so the catalog and the simulator agree without
 * sharing state. Keys start with "sim-"; descriptions say "Synthetic".
 */
export interface SyntheticSpec {
  readonly key: string
  readonly name: string
  readonly provider: ProviderId
  readonly categories: ReadonlyArray<CategoryId>
  readonly check_class: CheckClass
  readonly components: number
  readonly groups: number
  readonly regions: ReadonlyArray<string>
}

/**
 * Share of each format among synthetic sources, roughly as seen across real
 * status pages; one weight per provider of the adapter registry, so a new
 * provider fails to compile until it has one (0 keeps it out of the mix).
 */
const providerWeights = {
  statuspage_io: 40,
  incident_io: 10,
  instatus: 8,
  betterstack: 8,
  cachet_v2: 3,
  cachet_v3: 3,
  rss: 8,
  health_check: 8,
  social: 2,
  slack: 2,
  github: 2,
  gcp: 2,
  aws: 2,
  azure: 2
} as const satisfies Record<ProviderId, number>
const providerMix = Object.entries(providerWeights) as ReadonlyArray<readonly [ProviderId, number]>
const totalWeight = providerMix.reduce((sum, [, w]) => sum + w, 0)

const classMix: ReadonlyArray<readonly [CheckClass, number]> = [["critical", 10], ["high", 20], ["standard", 50], ["low", 20]]

const categoryIds: ReadonlyArray<CategoryId> = ["cloud", "payment", "communication", "devtools", "monitoring", "cdn_dns"]

const prefixes = [
  "Nimbus", "Quartz", "Vertex", "Helix", "Orbit", "Cobalt", "Lumen", "Argon", "Kestrel", "Juniper",
  "Atlas", "Beacon", "Cinder", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Iris", "Jasper"
]
const suffixesByCategory: Record<CategoryId, ReadonlyArray<string>> = {
  cloud: ["Cloud", "Compute", "Hosting", "Storage", "Database", "Functions"],
  payment: ["Pay", "Billing", "Checkout", "Ledger", "Payouts", "Invoicing"],
  communication: ["Mail", "Chat", "Voice", "SMS", "Meet", "Notify"],
  devtools: ["CI", "Git", "Deploy", "Registry", "Issues", "Docs"],
  monitoring: ["Metrics", "Logs", "Traces", "Uptime", "Analytics", "Alerts"],
  cdn_dns: ["CDN", "DNS", "Edge", "Shield", "Cache", "Domains"]
}

const pick = <A>(mix: ReadonlyArray<readonly [A, number]>, total: number, r: number): A => {
  let x = r * total
  for (const [value, weight] of mix) {
    if ((x -= weight) < 0) return value
  }
  return mix[mix.length - 1]![0]
}

export const syntheticSpec = (index: number): SyntheticSpec => {
  const random = prng(index * 7919 + 17)
  const provider = pick(providerMix, totalWeight, random())
  const category = categoryIds[index % categoryIds.length]!
  const second = random() < 0.15 ? categoryIds[(index + 1 + Math.floor(random() * 5)) % categoryIds.length]! : undefined
  const prefix = prefixes[Math.floor(random() * prefixes.length)]!
  const suffixes = suffixesByCategory[category]
  const suffix = suffixes[Math.floor(random() * suffixes.length)]!
  const number = String(index + 1).padStart(4, "0")
  const regional = provider === "aws" ? awsRegions : provider === "gcp" ? gcpRegions : []
  return {
    key: `sim-${prefix.toLowerCase()}-${suffix.toLowerCase()}-${number}`,
    name: `${prefix} ${suffix} ${number}`,
    provider,
    categories: second && second !== category ? [category, second] : [category],
    check_class: pick(classMix, 100, random()),
    // Statuspage summaries carry tens of components.
    components: 6 + Math.floor(random() * 40),
    groups: Math.floor(random() * 5),
    regions: regional
  }
}

/**
 * Where the simulator serves a synthetic source. For feed-based providers the
 * source's URL is the feed itself (as a user would add it), not the page.
 */
export const syntheticUrl = (spec: SyntheticSpec, simulatorUrl: string): string => {
  const base = `${simulatorUrl.replace(/\/+$/, "")}/s/${spec.key}`
  return spec.provider === "rss" ? `${base}/history.atom` : spec.provider === "social" ? `${base}/@status.rss` : base
}

/** The first `count` synthetic sources. */
export const syntheticSpecs = (count: number): Array<SyntheticSpec> =>
  Array.from({ length: count }, (_, i) => syntheticSpec(i))
