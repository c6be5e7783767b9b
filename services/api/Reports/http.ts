import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { ReportSchedules } from "../../reports/ReportSchedules.ts"

/** Handlers of the `reports` group: report schedules and the reports they produced. */
export const ReportsHttpNoDeps = HttpApiBuilder.group(
  Api,
  "reports",
  Effect.fn(function*(handlers) {
    const reports = yield* ReportSchedules
    return handlers.handleAll({
      listSchedules: ({ query }) => CurrentPrincipal.use((p) => reports.listSchedules(p, query)),
      createSchedule: ({ payload }) => CurrentPrincipal.use((p) => reports.createSchedule(p, payload)),
      updateSchedule: ({ params, payload }) => CurrentPrincipal.use((p) => reports.updateSchedule(p, params.id, payload)),
      deleteSchedule: ({ params }) => CurrentPrincipal.use((p) => reports.deleteSchedule(p, params.id)),
      listReports: ({ query }) => CurrentPrincipal.use((p) => reports.listReports(p, query)),
      getReport: ({ params }) => CurrentPrincipal.use((p) => reports.getReport(p, params.id)),
      getReportCsv: ({ params }) => CurrentPrincipal.use((p) => reports.csv(p, params.id)),
      getReportPdf: ({ params }) => CurrentPrincipal.use((p) => reports.pdf(p, params.id))
    })
  })
)

export const ReportsHttp = ReportsHttpNoDeps.pipe(Layer.provide(ReportSchedules.layer))
