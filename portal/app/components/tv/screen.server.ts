import { frameAncestorsHeader } from "#services/api/SecurityHeaders.ts"
import { tvTokenPattern } from "#services/domain/api/TvLinks.ts"
import { fromComponentStatus, fromMonitorState, fromSourceStatus } from "#services/domain/StatusWords.ts"
import { Users } from "#services/identity/Users.ts"
import type { StackItem } from "#services/domain/api/Stacks.ts"
import { Organizations } from "#services/orgs/Organizations.ts"
import { type Screen, TvLinks } from "#services/orgs/TvLinks.ts"
import { Clock, Effect } from "effect"
import { data } from "react-router"
import { type PortalContext, runEffect } from "../../lib/effect.server.ts"
import { requireUser } from "../../lib/session.server.ts"
import type { ScreenData, ScreenItem, ScreenLinks } from "./screen.ts"

/** Tells search engines to keep token pages out (a share or TV link is a credential). */
export const noindex = { "X-Robots-Tag": "noindex, nofollow" } as const

/**
 * The headers of a TV link's or share page's answer: `noindex`, and the origins its organization lets
 * frame it (`Organizations.frameAncestors`) in the internal `frameAncestorsHeader`, which the
 * portal's handler turns into the page's CSP `frame-ancestors` and never sends on
 * (services/api/SecurityHeaders.ts). No organization (a member's `/tv/<slug>`, a signed-in page) or
 * no origins: framed nowhere.
 */
export const screenHeaders = async (
  context: PortalContext,
  request: Request,
  organizationId: string | undefined
): Promise<Record<string, string>> => {
  if (organizationId === undefined) return noindex
  const origins = await runEffect(context, request, Organizations.use((o) => o.frameAncestors(organizationId)))
  return origins.length === 0 ? noindex : { ...noindex, [frameAncestorsHeader]: origins.join(" ") }
}

/** A route's `headers`: what its loader set with `screenHeaders` (React Router sends only what this returns). */
export const pageHeaders = (loaderHeaders: Headers): Record<string, string> => {
  const origins = loaderHeaders.get(frameAncestorsHeader)
  return origins === null ? noindex : { ...noindex, [frameAncestorsHeader]: origins }
}

const notFound = (what: string) => data({ message: `no ${what} at this address` }, { status: 404, headers: noindex })

const itemOf = (item: StackItem): ScreenItem =>
  item.component !== undefined
    ? { key: item.id, name: item.component.name, group: item.component.source_key, shown: fromComponentStatus(item.component.status) }
    : item.source !== undefined
    ? { key: item.id, name: item.source.name, group: "Whole service", shown: fromSourceStatus(item.source.status) }
    : { key: item.id, name: item.monitor?.name ?? "Monitor", group: "Website monitor", shown: fromMonitorState(item.monitor?.state) }

const screenData = (screen: Screen, title: string, now: number): ScreenData => ({
  title,
  rotation_s: screen.rotation_s,
  stacks: screen.stacks.map((s) => ({
    slug: s.slug,
    name: s.name,
    description: s.description,
    banner: s.health.status,
    unknown: s.health.counts.unknown,
    items: s.items.map(itemOf)
  })),
  incidents: screen.incidents.map((i) => ({
    id: i.id,
    title: i.title,
    status: i.status,
    impact: i.impact,
    source: i.source.name,
    updated_at: i.updated_at,
    resolved_at: i.resolved_at,
    latest_update: i.latest_update
  })),
  read_at: new Date(now).toISOString()
})

export type TvLoad =
  /** `organizationId`: a TV link's organization, whose settings say where the page may be framed (`screenHeaders`). */
  | { readonly kind: "screen"; readonly screen: ScreenData; readonly links: ScreenLinks; readonly organizationId?: string }
  | { readonly kind: "upgrade"; readonly organization: string; readonly message: string }

/** Seconds per stack of `/tv/<org>?rotation=N` (the signed-in screen has no stored link). */
const rotationOf = (request: Request): number | undefined => {
  const value = Number(new URL(request.url).searchParams.get("rotation"))
  return Number.isInteger(value) && value >= 2 && value <= 3600 ? value : undefined
}

/**
 * `/tv/<ref>`: a TV link's token (`tv_...`, no sign-in: a wall screen never
 * sees a login page), or an organization's slug for its signed-in members
 * (every stack). Both need the plan's TV dashboard; a revoked or unknown
 * token is 404.
 */
export const loadTv = async (context: PortalContext, request: Request, ref: string): Promise<TvLoad> => {
  if (tvTokenPattern.test(ref)) {
    const screen = await runEffect(context, request, Effect.gen(function*() {
      const found = yield* TvLinks.use((t) => t.screen(ref))
      return found === undefined ? undefined : { data: screenData(found, found.name, yield* Clock.currentTimeMillis), organizationId: found.organization_id }
    }))
    if (screen === undefined) throw notFound("TV screen")
    return {
      kind: "screen",
      screen: screen.data,
      links: { state: `/tv/${ref}/state`, stream: `/api/v1/tv/${ref}/stream` },
      organizationId: screen.organizationId
    }
  }
  const viewer = await requireUser(context, request)
  const organization = viewer.organizations.find((o) => o.slug === ref)
  if (organization === undefined) throw notFound("organization")
  const result = await runEffect(context, request, Effect.gen(function*() {
    const principal = yield* Users.use((u) => u.principalFor(viewer.user.id, organization.id))
    const screen = yield* TvLinks.use((t) => t.organizationScreen(principal, rotationOf(request))).pipe(Effect.result)
    if (screen._tag === "Failure") {
      if (screen.failure._tag === "PlanLimitReached") return { kind: "upgrade" as const, message: screen.failure.message }
      return yield* Effect.fail(screen.failure)
    }
    return { kind: "screen" as const, screen: screenData(screen.success, organization.name, yield* Clock.currentTimeMillis) }
  }))
  if (result.kind === "upgrade") return { kind: "upgrade", organization: organization.name, message: result.message }
  const query = new URL(request.url).search
  return {
    kind: "screen",
    screen: result.screen,
    links: { state: `/tv/${ref}/state${query}`, stream: `/api/v1/organizations/${ref}/stream` }
  }
}

/** `/share/<token>`: one public stack and its sources' open incidents; 404 once the token is revoked. */
export const loadShare = async (context: PortalContext, request: Request, token: string) => {
  // Share tokens are 24 random bytes in base64url (services/orgs/Stacks.ts).
  if (!/^[A-Za-z0-9_-]{32}$/.test(token)) throw notFound("shared stack")
  const read = await runEffect(context, request, Effect.gen(function*() {
    const found = yield* TvLinks.use((t) => t.share(token))
    return found === undefined ? undefined : {
      screen: screenData(found, found.stacks[0]?.name ?? "", yield* Clock.currentTimeMillis),
      organizationId: found.organization_id,
      sourceKeys: [...new Set(found.stacks.flatMap((s) => s.items.flatMap((i) => i.component?.source_key ?? i.source?.key ?? [])))]
    }
  }))
  if (read === undefined || read.screen.stacks.length === 0) throw notFound("shared stack")
  const links: ScreenLinks = { state: `/share/${token}/state`, stream: `/api/v1/share/${token}/stream` }
  return { screen: read.screen, links, sourceKeys: read.sourceKeys, organizationId: read.organizationId }
}
