import { fnv1a, prng } from "../platform/Prng.ts"
import type { SimComponent, SimSource } from "./Model.ts"

const groupNames = ["Core Services", "APIs", "Dashboard", "Integrations", "Infrastructure", "Regions"]
const componentNames = [
  "API", "Website", "Dashboard", "Authentication", "Webhooks", "Database", "Search", "Notifications",
  "Billing", "CDN", "DNS", "Storage", "Compute", "Queue", "Email Delivery", "Analytics", "Git Operations",
  "Pull Requests", "Actions", "Packages", "Pages", "Codespaces", "Copilot", "Issues", "SSO", "Mobile App",
  "Realtime", "Logs", "Metrics", "Payments API", "Checkout", "Connect", "Radar", "Messaging", "Voice", "Video"
]

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
