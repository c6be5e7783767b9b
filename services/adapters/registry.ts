import type { Adapter } from "./Adapter.ts"
import { aws } from "./providers/aws.ts"
import { azure } from "./providers/azure.ts"
import { betterstack } from "./providers/betterstack.ts"
import { cachetV2, cachetV3 } from "./providers/cachet.ts"
import { gcp } from "./providers/gcp.ts"
import { healthCheck } from "./providers/healthcheck.ts"
import { incidentIo } from "./providers/incidentio.ts"
import { instatus } from "./providers/instatus.ts"
import { rss } from "./providers/rss.ts"
import { slack } from "./providers/slack.ts"
import { social } from "./providers/social.ts"
import { github, statuspage } from "./providers/statuspage.ts"

/**
 * Every adapter, in detection order: where two providers' probes accept the
 * same document, the earlier one wins, so the more specific comes first
 * (GitHub and incident.io before plain Statuspage; the generic feed and the
 * plain health check last).
 */
export const adapters = [
  github,
  incidentIo,
  statuspage,
  instatus,
  betterstack,
  cachetV3,
  cachetV2,
  gcp,
  aws,
  azure,
  slack,
  social,
  rss,
  healthCheck
] as const satisfies ReadonlyArray<Adapter>

export type ProviderId = (typeof adapters)[number]["id"]

export const providerIds: ReadonlyArray<ProviderId> = adapters.map((a) => a.id)

const byId = new Map<string, Adapter>(adapters.map((a) => [a.id, a]))

/** The adapter for a wire value, or undefined. */
export const adapterFor = (id: string): Adapter | undefined => byId.get(id)

/** Whether a string is a known provider type. */
export const isProviderId = (id: string): id is ProviderId => byId.has(id)
