import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type IncidentFact, type IncidentFigures, incidentFiguresOf, incidentImpacts } from "../domain/IncidentFigures.ts"
import type { Range } from "../domain/StatusDurations.ts"
import { rowsOf } from "../platform/Rows.ts"

/**
 * The incidents providers published (PostgreSQL `incidents`, with the
 * components they named), as figures over a range (services/domain/IncidentFigures.ts).
 * One query for any scope: whole sources (every incident of theirs) and
 * single components (the incidents naming one of them), what a source's
 * page and a stack's report read.
 */
export interface IncidentScope {
  /** Keys of the sources whose every incident counts. */
  readonly sources: ReadonlyArray<string>
  /** Component ids: the incidents naming one of them count. */
  readonly components: ReadonlyArray<string>
}

const Row = Schema.Struct({
  impact: Schema.Literals(incidentImpacts),
  region: Schema.NullOr(Schema.String),
  started_ms: Schema.Number,
  resolved_ms: Schema.NullOr(Schema.Number),
  components: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String }))
})

export class IncidentStats extends Context.Service<IncidentStats, {
  figures(scope: IncidentScope, range: Range): Effect.Effect<IncidentFigures>
}>()("statusgrid/history/IncidentStats") {
  static readonly layer = Layer.effect(IncidentStats, Effect.gen(function*() {
    const sql = yield* SqlClient
    const decode = rowsOf("incidents", Row)

    const figures = Effect.fn("IncidentStats.figures")(function*(scope: IncidentScope, range: Range) {
      if (scope.sources.length === 0 && scope.components.length === 0) return incidentFiguresOf([], range)
      const from = new Date(range.from).toISOString()
      const to = new Date(range.to).toISOString()
      const rows = yield* sql`
        SELECT i.impact, i.region,
          (extract(epoch FROM i.started_at) * 1000)::float8 AS started_ms,
          (extract(epoch FROM i.resolved_at) * 1000)::float8 AS resolved_ms,
          coalesce((SELECT json_agg(json_build_object('id', c.id::text, 'name', c.name) ORDER BY c.position, c.name)
            FROM incident_components ic JOIN components c ON c.id = ic.component_id WHERE ic.incident_id = i.id), '[]'::json) AS components
        FROM incidents i
        WHERE i.started_at >= ${from}::timestamptz AND i.started_at < ${to}::timestamptz AND i.impact <> 'maintenance'
          AND (i.source_id IN (SELECT id FROM sources WHERE key = ANY(${scope.sources}::text[])) OR EXISTS (
            SELECT 1 FROM incident_components ic WHERE ic.incident_id = i.id AND ic.component_id = ANY(${scope.components}::uuid[])))`
        .pipe(Effect.orDie, Effect.flatMap(decode))
      return incidentFiguresOf(
        rows.map((r): IncidentFact => ({
          impact: r.impact,
          region: r.region,
          started: r.started_ms,
          resolved: r.resolved_ms,
          components: r.components
        })),
        range
      )
    })

    return IncidentStats.of({ figures })
  }))
}
