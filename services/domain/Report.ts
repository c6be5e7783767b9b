import { Schema } from "effect"
import { reportFrequencies } from "./ReportPeriods.ts"

/**
 * A scheduled report's figures (issue "Analytics and reports"): per stack its
 * uptime against the organization's target, downtime, outages and their
 * mean time to resolution, each item, the incidents of its sources; the
 * slowest monitors. Generated once per period (services/reports/), stored as
 * JSON on the report's row and rendered from it as HTML, CSV and PDF, so
 * every format says the same figures.
 */

const Ms = Schema.Number.check(Schema.isGreaterThanOrEqualTo(0))
const Instant = Schema.String.annotate({ format: "date-time" })

export const ReportFrequency = Schema.Literals(reportFrequencies)

export const ReportItem = Schema.Struct({
  kind: Schema.Literals(["component", "source", "monitor"]),
  name: Schema.String,
  uptime: Schema.NullOr(Schema.Number),
  downtime_ms: Ms,
  outage_count: Schema.Int
})

export const ReportStack = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  uptime: Schema.NullOr(Schema.Number).annotate({ description: "Down while the banner showed an outage (the stack analytics' rule)." }),
  downtime_ms: Ms,
  outage_count: Schema.Int,
  mttr_ms: Schema.NullOr(Ms),
  /** The target met (uptime ≥ target), missed, or null when nothing was seen. */
  sla_met: Schema.NullOr(Schema.Boolean),
  /** Downtime the target allows over the time counted. */
  allowed_downtime_ms: Ms,
  outages: Schema.Array(Schema.Struct({ start: Instant, end: Schema.NullOr(Instant), duration_ms: Ms })),
  items: Schema.Array(ReportItem),
  incidents: Schema.Struct({ count: Schema.Int, mttr_ms: Schema.NullOr(Ms) })
})
export type ReportStack = typeof ReportStack.Type

export const SlowMonitor = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  checks: Schema.Int,
  mean_ms: Ms,
  p95_ms: Ms.annotate({ description: "The highest daily p95 of the period." })
})

export const ReportContent = Schema.Struct({
  organization: Schema.Struct({ name: Schema.String, slug: Schema.String }),
  schedule: Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    frequency: ReportFrequency,
    time_zone: Schema.String,
    sla_target: Schema.Number
  }),
  from: Instant,
  to: Instant,
  generated_at: Instant,
  stacks: Schema.Array(ReportStack),
  slowest_monitors: Schema.Array(SlowMonitor)
}).annotate({ identifier: "ReportContent" })
export type ReportContent = typeof ReportContent.Type
