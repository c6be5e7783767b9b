import { MaintenanceCalendar } from "#services/orgs/MaintenanceCalendar.ts"
import { data } from "react-router"
import type { Route } from "./+types/feed.ts"
import { runEffect } from "../../lib/effect.server.ts"

/**
 * `GET /calendar/<token>.ics`: an organization's maintenance calendar as
 * RFC 5545 `text/calendar`, for calendar clients (no session: the token is
 * the credential). An unknown, replaced or revoked token answers 404.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const token = params.file.endsWith(".ics") ? params.file.slice(0, -".ics".length) : ""
  const origin = new URL(request.url).origin
  const body = await runEffect(context, request, MaintenanceCalendar.use((c) => c.ics(token, origin, new Date())))
  if (body === undefined) throw data({ message: "no such calendar" }, { status: 404, statusText: "Not Found" })
  return new Response(body, {
    headers: {
      "content-type": "text/calendar; charset=utf-8",
      "content-disposition": `inline; filename="maintenance.ics"`,
      "cache-control": "private, max-age=300",
      "x-robots-tag": "noindex"
    }
  })
}
