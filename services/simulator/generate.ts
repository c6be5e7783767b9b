import type { SimComponent, SimSource } from "./Model.ts"

/** A small deterministic PRNG (mulberry32), so generated sources are the same on every run. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** FNV-1a: a stable 32-bit hash, for ids and seeds derived from keys. */
export const fnv1a = (s: string): number => {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}

const groupNames = ["Core Services", "APIs", "Dashboard", "Integrations", "Infrastructure", "Regions"]
const componentNames = [
  "API", "Website", "Dashboard", "Authentication", "Webhooks", "Database", "Search", "Notifications",
  "Billing", "CDN", "DNS", "Storage", "Compute", "Queue", "Email Delivery", "Analytics", "Git Operations",
  "Pull Requests", "Actions", "Packages", "Pages", "Codespaces", "Copilot", "Issues", "SSO", "Mobile App",
  "Realtime", "Logs", "Metrics", "Payments API", "Checkout", "Connect", "Radar", "Messaging", "Voice", "Video"
]
export const awsRegions = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1", "ap-northeast-1"]
export const gcpRegions = ["us-central1", "us-east1", "europe-west1", "europe-west4", "asia-east1", "asia-northeast1"]

export interface GenerateOptions {
  readonly key: string
  readonly name: string
  readonly provider: string
  readonly baseUrl: string
  /** leaf components (default 12) */
  readonly components?: number
  /** groups the leaves are spread over (default 2; 0 = flat) */
  readonly groups?: number
  /** regions the source spans; regional providers get one component per region */
  readonly regions?: ReadonlyArray<string>
  readonly now?: Date
}

/** A source in the simulator's model, all operational, with the same components for the same key. */
export const generateSource = (options: GenerateOptions): SimSource => {
  const random = prng(fnv1a(options.key))
  const leafCount = options.components ?? 12
  const groupCount = Math.min(options.groups ?? 2, leafCount)
  const now = options.now ?? new Date()
  const id = (n: number) => `${options.key.replace(/[^a-z0-9]/g, "").slice(0, 6).padEnd(6, "x")}${String(n).padStart(6, "0")}`
  const components: Array<SimComponent> = []
  const groupIds: Array<string> = []
  for (let g = 0; g < groupCount; g++) {
    const gid = id(900000 + g)
    groupIds.push(gid)
    components.push({
      id: gid,
      name: groupNames[g % groupNames.length]! + (g >= groupNames.length ? ` ${g + 1}` : ""),
      description: "",
      status: "operational",
      parent_id: null,
      is_group: true,
      position: g,
      region: null
    })
  }
  const regions = [...(options.regions ?? [])]
  for (let i = 0; i < leafCount; i++) {
    const base = componentNames[Math.floor(random() * componentNames.length)]!
    const region = regions.length > 0 ? regions[i % regions.length]! : null
    components.push({
      id: id(i + 1),
      name: region ? `${base} (${region})` : i < componentNames.length ? base : `${base} ${i + 1}`,
      description: `${base} of ${options.name}`,
      status: "operational",
      parent_id: groupIds.length > 0 ? groupIds[i % groupIds.length]! : null,
      is_group: false,
      position: groupCount + i,
      region
    })
  }
  // Names must be unique within a source for formats that key components by name.
  const seen = new Map<string, number>()
  for (const c of components) {
    const n = (seen.get(c.name) ?? 0) + 1
    seen.set(c.name, n)
    if (n > 1) c.name = `${c.name} ${n}`
  }
  return {
    key: options.key,
    name: options.name,
    provider: options.provider,
    baseUrl: options.baseUrl,
    components,
    incidents: [],
    maintenances: [],
    regions,
    version: 1,
    updatedAt: now
  }
}
