import { ReportSchedules } from "#services/reports/ReportSchedules.ts"
import { Effect } from "effect"
import { data } from "react-router"
import type { Route } from "./+types/file.ts"
import { runEffect } from "../../../lib/effect.server.ts"
import { requireMember } from "../../../lib/member.server.ts"
import { isUuid } from "../stacks/stacks.server.ts"

/** `GET /settings/<org>/reports/<id>/csv|pdf`: the report's CSV or PDF, as the API's `/reports/{id}/csv|pdf` gives them. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { principal } = await requireMember(context, request, params.org)
  if (!isUuid(params.id) || (params.format !== "csv" && params.format !== "pdf")) throw data({ message: "no such report file" }, { status: 404 })
  const name = `statusgrid-report-${params.id.slice(0, 8)}.${params.format}`
  const headers = { "content-disposition": `attachment; filename="${name}"`, "cache-control": "private, no-store" }
  if (params.format === "csv") {
    const csv = await runEffect(context, request, ReportSchedules.use((r) => r.csv(principal, params.id)))
    return new Response(csv, { headers: { ...headers, "content-type": "text/csv; charset=utf-8" } })
  }
  const pdf = await runEffect(context, request, ReportSchedules.use((r) => r.pdf(principal, params.id)).pipe(Effect.map((bytes) => bytes.slice())))
  return new Response(pdf, { headers: { ...headers, "content-type": "application/pdf" } })
}
