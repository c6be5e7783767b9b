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

/** Every format the simulator serves, one per provider type. */
export const renderers: ReadonlyArray<Renderer> = [
  statuspageRenderer,
  githubRenderer,
  incidentIoRenderer,
  instatusRenderer,
  betterstackRenderer,
  cachetV2Renderer,
  cachetV3Renderer,
  gcpRenderer,
  awsRenderer,
  azureRenderer,
  slackRenderer,
  rssRenderer,
  socialRenderer,
  healthCheckRenderer
]

const byProvider = new Map(renderers.map((r) => [r.provider, r]))

export const rendererFor = (provider: string): Renderer | undefined => byProvider.get(provider)
