import { isProviderId, type ProviderId } from "../../adapters/registry.ts"
import type { Renderer } from "../Model.ts"
import { awsRenderer } from "./aws.ts"
import { azureRenderer } from "./azure.ts"
import { betterstackRenderer } from "./betterstack.ts"
import { cachetV2Renderer, cachetV3Renderer } from "./cachet.ts"
import { gcpRenderer } from "./gcp.ts"
import { healthCheckRenderer } from "./healthcheck.ts"
import { incidentIoRenderer } from "./incidentio.ts"
import { instatusRenderer } from "./instatus.ts"
import { rssRenderer } from "./rss.ts"
import { slackRenderer } from "./slack.ts"
import { socialRenderer } from "./social.ts"
import { githubRenderer, statuspageRenderer } from "./statuspage.ts"

/**
 * Every format the simulator serves, one per provider type of the adapter
 * registry: a provider added to `adapters/registry.ts` without a renderer
 * here fails to compile. Each renderer's `provider` is its key (checked by
 * index.test.ts).
 */
export const rendererByProvider = {
  statuspage_io: statuspageRenderer,
  github: githubRenderer,
  incident_io: incidentIoRenderer,
  instatus: instatusRenderer,
  betterstack: betterstackRenderer,
  cachet_v2: cachetV2Renderer,
  cachet_v3: cachetV3Renderer,
  gcp: gcpRenderer,
  aws: awsRenderer,
  azure: azureRenderer,
  slack: slackRenderer,
  rss: rssRenderer,
  social: socialRenderer,
  health_check: healthCheckRenderer
} as const satisfies Record<ProviderId, Renderer>

export const renderers: ReadonlyArray<Renderer> = Object.values(rendererByProvider)

export const rendererFor = (provider: string): Renderer | undefined =>
  isProviderId(provider) ? rendererByProvider[provider] : undefined
