import type { Effect, Exit } from "effect"
import type { CrowdReports } from "../crowd/CrowdReports.ts"
import type { CrowdSignals } from "../crowd/CrowdSignals.ts"
import type { Analytics } from "../history/Analytics.ts"
import type { StatusHistory } from "../history/StatusHistory.ts"
import type { WebPushPublicKey } from "../notifier/WebPushPublicKey.ts"
import type { Oidc } from "../identity/Oidc.ts"
import type { Sessions } from "../identity/Sessions.ts"
import type { SignInThrottle } from "../identity/SignInThrottle.ts"
import type { Users } from "../identity/Users.ts"
import type { Alerts } from "../orgs/Alerts.ts"
import type { ApiKeys } from "../orgs/ApiKeys.ts"
import type { Channels } from "../orgs/Channels.ts"
import type { CustomSources } from "../orgs/CustomSources.ts"
import type { MaintenanceCalendar } from "../orgs/MaintenanceCalendar.ts"
import type { MaintenanceWindows } from "../orgs/MaintenanceWindows.ts"
import type { Monitors } from "../orgs/Monitors.ts"
import type { Members } from "../orgs/Members.ts"
import type { Organizations } from "../orgs/Organizations.ts"
import type { Rules } from "../orgs/Rules.ts"
import type { StackBoard } from "../orgs/StackBoard.ts"
import type { Stacks } from "../orgs/Stacks.ts"
import type { TvLinks } from "../orgs/TvLinks.ts"
import type { SourceHistories } from "./SourceHistory.ts"
import type { StackAnalyticsReader } from "../reports/StackAnalytics.ts"
import type { ReportSchedules } from "../reports/ReportSchedules.ts"
import type { Sources } from "./Sources.ts"

/**
 * The header the server sets on every request it hands the portal: the CSP nonce of the page's
 * scripts (portal/app/entry.server.tsx; services/api/SecurityHeaders.ts), replacing any header of
 * that name the client sent.
 */
export const nonceHeader = "x-statusgrid-nonce"

/**
 * The services the portal's loaders and actions may use: the running server's
 * own instances (services/api/Portal.ts passes its context), never a second
 * runtime. Add a service here and to `PortalRoutes`' layer to use it in a page.
 */
export type PortalServices =
  | Alerts
  | Analytics
  | ApiKeys
  | Channels
  | CrowdReports
  | CrowdSignals
  | CustomSources
  | MaintenanceCalendar
  | MaintenanceWindows
  | Members
  | Monitors
  | Oidc
  | Organizations
  | Rules
  | Users
  | Sessions
  | SignInThrottle
  | Sources
  | SourceHistories
  | Stacks
  | StackBoard
  | StackAnalyticsReader
  | ReportSchedules
  | StatusHistory
  | TvLinks
  | WebPushPublicKey

/** What the server hands each portal request (portal/app/context.ts puts it in React Router's context). */
export interface PortalRuntime {
  /** Runs an effect on the running server's services; its Exit, so the caller maps typed errors. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, PortalServices>, options?: { readonly signal?: AbortSignal }) => Promise<Exit.Exit<A, E>>
}

/** The portal's built server entry (portal/server/handler.ts): a Web handler taking the runtime along. */
export interface PortalHandler {
  readonly handle: (request: Request, runtime: PortalRuntime) => Promise<Response>
}
