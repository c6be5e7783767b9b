import { Effect } from "effect"
import { data } from "react-router"
import type { Route } from "./+types/audit-csv.ts"
import { runEffect } from "../../lib/effect.server.ts"
import { requireMember } from "../../lib/member.server.ts"
import { actorLabel, actorsOf, allEntries, auditFilterOf, csvRow, json } from "./audit.server.ts"

const header = ["time", "actor_kind", "actor_id", "actor", "action", "record_type", "record_id", "ip", "before", "after"]

/** `GET /settings/<org>/audit.csv[?filter]`: the filtered audit log as RFC 4180 CSV (Admin, as the page). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal } = await requireMember(context, request, params.org)
  const { filter, errors } = auditFilterOf(new URL(request.url))
  if (filter === undefined) throw data({ message: Object.entries(errors).map(([k, v]) => `${k} ${v}`).join("; ") }, { status: 400 })
  const { entries, actors } = await runEffect(context, request, Effect.gen(function*() {
    const entries = yield* allEntries(principal, filter)
    const actors = yield* actorsOf(principal)
    return { entries, actors }
  }))
  const body = [
    csvRow(header),
    ...entries.map((e) =>
      csvRow([e.created_at, e.actor.kind, e.actor.id ?? "", actorLabel(e, actors), e.action, e.entity_type, e.entity_id ?? "", e.ip ?? "", json(e.before), json(e.after)])
    )
  ].join("")
  return new Response(body, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="audit-${organization.slug}.csv"`,
      "cache-control": "private, no-store"
    }
  })
}
