import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { CheckResultRow } from "../../services/domain/CheckResult.ts"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { rollupParams, rollupRows } from "../../services/history/Rollups.ts"
import { tempDir } from "../support/stores.ts"

/**
 * A source check is one row with its components in arrays (migrations/clickhouse/0004, decision 0016),
 * and the rollups keep a component's rows only for its checks that were not operational (0005,
 * decision 0022). The same checks written the old way (one row per component) and the new way must
 * read the same, hour by hour and day by day, figure for figure, through the readers' view of the
 * rollups (services/history/Rollups.ts); response times are the source's only; and a batch inserted
 * twice with its token is counted once.
 */
const chdb = Layer.unwrap(Effect.map(tempDir("chdb-arrays"), (dir) => ClickHouse.layerEmbedded(dir, "statusgrid_arrays")))

const components = ["api", "web", "eu-db", "us-db"] as const
const regionOf = (c: string) => c === "eu-db" ? "eu-west-1" : c === "us-db" ? "us-east-1" : ""

/** The status of each component at check `i`: an outage of `api`, a degraded `web`, maintenance of `eu-db`. */
const statusAt = (component: string, i: number) =>
  component === "api" && i >= 100 && i < 112 ? "down"
  : component === "api" && i >= 112 && i < 115 ? "critical"
  : component === "web" && i % 7 === 0 ? "degraded"
  : component === "eu-db" && i >= 30 && i < 60 ? "maintenance"
  : "operational"

/** 200 checks a minute apart across midnight (four hours, two days), with failures and varied latency. */
const checks = Array.from({ length: 200 }, (_, i) => ({
  at: new Date(Date.UTC(2026, 10, 20, 22, 30, 0) + i * 60_000).toISOString(),
  latency: 80 + ((i * 37) % 400),
  error: i % 50 === 49 ? "connect ETIMEDOUT" : ""
}))

const base = (subject: string, c: typeof checks[number]) => ({
  checked_at: c.at,
  subject_kind: "source" as const,
  subject_id: subject,
  status: "operational",
  latency_ms: c.latency,
  http_status: c.error === "" ? 200 : 0,
  bytes: 1024,
  error: c.error,
  region: "",
  shard: 3
})

/** The old form: the source's row, then one per component. */
const perComponent = (subject: string): Array<CheckResultRow> =>
  checks.flatMap((c, i) => [
    { ...base(subject, c), component_id: "" },
    ...components.map((id) => ({ ...base(subject, c), component_id: id, status: statusAt(id, i), bytes: 0, region: regionOf(id) }))
  ])

/** The new form: one row per check, its time in milliseconds since the epoch as a source check writes it. */
const arrays = (subject: string): Array<CheckResultRow> =>
  checks.map((c, i) => ({
    ...base(subject, c),
    checked_at: Date.parse(c.at),
    component_id: "",
    component_ids: [...components],
    component_statuses: components.map((id) => statusAt(id, i)),
    component_regions: components.map(regionOf)
  }))

/** Every figure the readers get of one subject's rollup (the source and its four components), by period, comparable across subjects. */
const rollup = (table: "check_rollup_hourly" | "check_rollup_daily", subject: string) =>
  Effect.gen(function*() {
    const ch = yield* ClickHouse
    const period = table === "check_rollup_hourly" ? "hour" : "day"
    const asked = ["", ...components].map((component) => ({ kind: "source" as const, id: subject, component }))
    return yield* ch.query(
      `SELECT component_id, toString(${period}) AS period, sum(checks) AS checks, sum(down_checks) AS down,
         sum(degraded_checks) AS degraded, sum(maintenance_checks) AS maintenance, sum(error_checks) AS errors
       FROM (${rollupRows(table, period, "1 = 1")})
       GROUP BY component_id, period ORDER BY component_id, period`,
      { kinds: ["source"], ids: [subject], components: ["", ...components], ...rollupParams(asked) }
    )
  })

/** The response-time figures of a rollup's rows for one subject, by component and period, as stored. */
const latencies = (table: "check_rollup_hourly" | "check_rollup_daily", subject: string) =>
  Effect.gen(function*() {
    const ch = yield* ClickHouse
    const period = table === "check_rollup_hourly" ? "hour" : "day"
    return yield* ch.query(
      `SELECT component_id, toString(${period}) AS period, sum(latency_sum) AS latency_sum, max(latency_max) AS latency_max,
         arrayMap((x) -> round(x, 3), quantilesTDigestMerge(0.5, 0.95, 0.99)(latency_quantiles)) AS q
       FROM ${table} WHERE subject_kind = 'source' AND subject_id = {s:String}
       GROUP BY component_id, period ORDER BY component_id, period`,
      { s: subject }
    )
  })

/** The rows of the source itself (`component_id` ''). */
const sourceRows = (rows: ReadonlyArray<Record<string, unknown>>) => rows.filter((r) => r["component_id"] === "")

describe("check results with components in arrays", () => {
  layer(chdb, { timeout: 120_000, excludeTestServices: true })("on chDB", (it) => {
    it.effect("roll up exactly as one row per component did; a repeated batch counts once", () =>
      Effect.gen(function*() {
        yield* Migrations.migrateClickHouse()
        const ch = yield* ClickHouse
        yield* ch.insert("check_results", perComponent("rows"), { token: "rows-1" })
        yield* ch.insert("check_results", arrays("arrays"), { token: "arrays-1" })

        for (const table of ["check_rollup_hourly", "check_rollup_daily"] as const) {
          const old = yield* rollup(table, "rows")
          const now = yield* rollup(table, "arrays")
          // The source and its four components, over four hours (or two days).
          assert.strictEqual(old.length, 5 * (table === "check_rollup_hourly" ? 4 : 2), table)
          assert.deepStrictEqual(now, old, table)
          // The source's response times, the same from both forms.
          assert.deepStrictEqual(sourceRows(yield* latencies(table, "arrays")), sourceRows(yield* latencies(table, "rows")), table)
        }
        // Written less: the arrays' rollup has rows for the source, its '*' row and the components seen
        // not operational (us-db never was), where the old form has one for every component.
        const kept = (subject: string) =>
          Effect.map(latencies("check_rollup_daily", subject), (rows) => [...new Set(rows.map((r) => String(r["component_id"])))])
        assert.deepStrictEqual(yield* kept("arrays"), ["", "*", "api", "eu-db", "web"])
        assert.deepStrictEqual(yield* kept("rows"), ["", "api", "eu-db", "us-db", "web"])
        // Spot checks against the plan, so the equality above is not of two empty or wrong sets.
        const daily = yield* rollup("check_rollup_daily", "arrays")
        const apiTotal = daily.filter((r) => r["component_id"] === "api").reduce((n, r) => n + Number(r["down"]), 0)
        assert.strictEqual(apiTotal, 15)
        const euMaintenance = daily.filter((r) => r["component_id"] === "eu-db").reduce((n, r) => n + Number(r["maintenance"]), 0)
        assert.strictEqual(euMaintenance, 30)
        const checksAll = daily.filter((r) => r["component_id"] === "web").reduce((n, r) => n + Number(r["checks"]), 0)
        assert.strictEqual(checksAll, 200)
        const errorsAll = daily.filter((r) => r["component_id"] === "us-db").reduce((n, r) => n + Number(r["errors"]), 0)
        assert.strictEqual(errorsAll, 4)
        // Response times: the source's, every check; none kept for components (their latency is the source's).
        const stats = yield* latencies("check_rollup_daily", "arrays")
        const total = stats.filter((r) => r["component_id"] === "").reduce((n, r) => n + Number(r["latency_sum"]), 0)
        assert.strictEqual(total, checks.reduce((n, c) => n + c.latency, 0))
        for (const row of stats.filter((r) => r["component_id"] !== "")) {
          assert.deepStrictEqual([Number(row["latency_sum"]), Number(row["latency_max"])], [0, 0])
        }

        // One row per check in the table; the arrays as written.
        const [stored] = yield* ch.query(
          "SELECT count() AS n, sum(length(component_ids)) AS components, countIf(has(component_regions, 'eu-west-1')) AS eu FROM check_results WHERE subject_id = 'arrays'"
        )
        assert.deepStrictEqual({ n: Number(stored!["n"]), components: Number(stored!["components"]), eu: Number(stored!["eu"]) }, {
          n: 200,
          components: 800,
          eu: 200
        })
        // Times written as milliseconds since the epoch store the same instants as the ISO 8601 text.
        const times = (subject: string) =>
          ch.query("SELECT toString(checked_at) AS t FROM check_results WHERE subject_id = {s:String} ORDER BY checked_at", { s: subject })
        const arrayTimes = yield* times("arrays")
        assert.deepStrictEqual(arrayTimes, yield* times("rows").pipe(Effect.map((rows) => rows.filter((_, i) => i % 5 === 0))))
        assert.strictEqual(arrayTimes[0]!["t"], "2026-11-20 22:30:00.000")

        // The same batch again with its token (a retried insert): dropped by the table and by both views.
        const before = yield* latencies("check_rollup_hourly", "arrays")
        yield* ch.insert("check_results", arrays("arrays"), { token: "arrays-1" })
        const [again] = yield* ch.query("SELECT count() AS n FROM check_results WHERE subject_id = 'arrays'")
        assert.strictEqual(Number(again!["n"]), 200)
        assert.deepStrictEqual(yield* latencies("check_rollup_hourly", "arrays"), before)
        assert.deepStrictEqual(yield* rollup("check_rollup_hourly", "arrays"), yield* rollup("check_rollup_hourly", "rows"))
      }))
  })
})
