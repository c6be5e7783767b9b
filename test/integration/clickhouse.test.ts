import * as SqlFiles from "../../services/platform/SqlFiles.ts"
import * as Fs from "node:fs"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { ClickHouse } from "../../services/platform/ClickHouse.ts"
import * as Migrations from "../../services/platform/Migrations.ts"
import { tempDir } from "../support/stores.ts"

const chdb = Layer.unwrap(Effect.map(tempDir("chdb"), (dir) => ClickHouse.layerEmbedded(dir, "statusgrid_test")))

interface Check {
  readonly at: string
  readonly status: string
  readonly latency: number
  readonly error?: string
}

/** Two hours of checks of one source, with an outage and a slow spell in the second hour. */
const checks: ReadonlyArray<Check> = [
  ...Array.from({ length: 120 }, (_, i): Check => ({
    at: new Date(Date.UTC(2026, 10, 20, 10, 0, i * 30)).toISOString(),
    status: "operational",
    latency: 100 + (i % 10)
  })),
  ...Array.from({ length: 120 }, (_, i): Check => ({
    at: new Date(Date.UTC(2026, 10, 20, 11, 0, i * 30)).toISOString(),
    status: i < 12 ? "down" : i < 30 ? "degraded" : "operational",
    latency: i < 12 ? 5000 : i < 30 ? 900 : 120,
    ...(i < 12 ? { error: "connect ETIMEDOUT" } : {})
  }))
]

const HourRow = Schema.Struct({
  hour_utc: Schema.String,
  n: Schema.Number,
  down: Schema.Number,
  degraded: Schema.Number,
  errors: Schema.Number,
  uptime: Schema.Number,
  avg_latency: Schema.Number,
  max_latency: Schema.Number,
  p50: Schema.Number
})

const median = (values: ReadonlyArray<number>) => {
  const sorted = values.toSorted((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 0 ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[mid]!
}

describe("ClickHouse", () => {
  layer(chdb, { timeout: 120_000, excludeTestServices: true })("on chDB", (it) => {
    it.effect("applies every migration once, and a second run applies none", () =>
      Effect.gen(function*() {
        const first = yield* Migrations.migrateClickHouse()
        const files = Fs.readdirSync(SqlFiles.migrationsDir("clickhouse")).filter((f) => f.endsWith(".sql"))
        assert.deepStrictEqual(first.map((m) => m.id), files.map((f) => Number(f.slice(0, 4))).toSorted((a, b) => a - b))
        assert.deepStrictEqual(yield* Migrations.migrateClickHouse(), [])
        const ch = yield* ClickHouse
        const tables = yield* ch.query(
          "SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name"
        )
        assert.deepStrictEqual(tables.map((t) => t["name"]), [
          "check_results",
          "check_rollup_daily",
          "check_rollup_daily_mv",
          "check_rollup_hourly",
          "check_rollup_hourly_mv",
          "schema_migrations",
          "status_transitions"
        ])
      }))

    it.effect("raw results are partitioned by day, ordered per subject and expire", () =>
      Effect.gen(function*() {
        const ch = yield* ClickHouse
        const [table] = yield* ch.query(
          "SELECT partition_key, sorting_key, create_table_query FROM system.tables " +
            "WHERE database = currentDatabase() AND name = 'check_results'"
        )
        assert.strictEqual(table!["partition_key"], "toDate(checked_at)")
        assert.strictEqual(table!["sorting_key"], "subject_kind, subject_id, component_id, checked_at")
        assert.match(String(table!["create_table_query"]), /TTL toDateTime\(checked_at\) \+ toIntervalDay\(90\)/)
      }))

    it.effect("stores check results and reads them back", () =>
      Effect.gen(function*() {
        const ch = yield* ClickHouse
        yield* ch.insert("check_results", [
          {
            checked_at: "2026-11-21T08:00:00.250Z",
            subject_kind: "monitor",
            subject_id: "7d7f0a40-0000-4000-8000-000000000001",
            status: "down",
            latency_ms: 10000,
            http_status: 503,
            bytes: 512,
            error: "expected status 200-299, got 503",
            shard: 7
          }
        ])
        const rows = yield* ch.query(
          "SELECT toString(checked_at) AS at, subject_kind, status, latency_ms, http_status, bytes, error, shard " +
            "FROM check_results WHERE subject_id = {id:String}",
          { id: "7d7f0a40-0000-4000-8000-000000000001" }
        )
        assert.deepStrictEqual(rows, [{
          at: "2026-11-21 08:00:00.250",
          subject_kind: "monitor",
          status: "down",
          latency_ms: 10000,
          http_status: 503,
          bytes: 512,
          error: "expected status 200-299, got 503",
          shard: 7
        }])
      }))

    it.effect("rolls results up by hour and by day for uptime and response time", () =>
      Effect.gen(function*() {
        const ch = yield* ClickHouse
        // Inserted in three batches, as the poller would: the rollups must merge them.
        const rows = checks.map((c) => ({
          checked_at: c.at,
          subject_kind: "source",
          subject_id: "github",
          status: c.status,
          latency_ms: c.latency,
          error: c.error ?? ""
        }))
        for (let i = 0; i < rows.length; i += 100) yield* ch.insert("check_results", rows.slice(i, i + 100))

        const hourly = (yield* ch.query(`
          SELECT toString(hour) AS hour_utc, sum(checks) AS n, sum(down_checks) AS down,
                 sum(degraded_checks) AS degraded, sum(error_checks) AS errors,
                 round(100 * (1 - sum(down_checks) / sum(checks)), 3) AS uptime,
                 round(sum(latency_sum) / sum(checks), 3) AS avg_latency, max(latency_max) AS max_latency,
                 round(quantilesTDigestMerge(0.5, 0.95, 0.99)(latency_quantiles)[1]) AS p50
          FROM check_rollup_hourly
          WHERE subject_kind = 'source' AND subject_id = 'github' AND component_id = ''
          GROUP BY hour ORDER BY hour`)).map((row) => Schema.decodeUnknownSync(HourRow)(row))

        const expected = ["2026-11-20 10:00:00", "2026-11-20 11:00:00"].map((hour, h) => {
          const inHour = checks.slice(h * 120, h * 120 + 120)
          const down = inHour.filter((c) => c.status === "down").length
          const latencies = inHour.map((c) => c.latency)
          return {
            hour_utc: hour,
            n: inHour.length,
            down,
            degraded: inHour.filter((c) => c.status === "degraded").length,
            errors: inHour.filter((c) => c.error !== undefined).length,
            uptime: Math.round(100_000 * (1 - down / inHour.length)) / 1000,
            avg_latency: Math.round(1000 * latencies.reduce((a, b) => a + b, 0) / latencies.length) / 1000,
            max_latency: Math.max(...latencies),
            p50: Math.round(median(latencies))
          }
        })
        assert.deepStrictEqual(hourly.map(({ p50: _, ...rest }) => rest), expected.map(({ p50: _, ...rest }) => rest))
        // t-digest is approximate: the median must land within 2 ms of the exact one.
        hourly.forEach((row, i) => assert.approximately(row.p50, expected[i]!.p50, 2))

        const [daily] = yield* ch.query(`
          SELECT sum(checks) AS n, round(100 * (1 - sum(down_checks) / sum(checks)), 3) AS uptime
          FROM check_rollup_daily WHERE subject_id = 'github' AND day = '2026-11-20'`)
        assert.deepStrictEqual(daily, { n: 240, uptime: Math.round(100_000 * (1 - 12 / 240)) / 1000 })
      }))

    it.effect("records status transitions", () =>
      Effect.gen(function*() {
        const ch = yield* ClickHouse
        yield* ch.insert("status_transitions", [
          {
            changed_at: "2026-11-20T11:00:00Z",
            subject_kind: "source",
            subject_id: "github",
            component_id: "api",
            previous_status: "operational",
            status: "critical",
            incident_id: "inc-1",
            event_id: "evt-1"
          },
          {
            changed_at: "2026-11-20T11:06:00Z",
            subject_kind: "source",
            subject_id: "github",
            component_id: "api",
            previous_status: "critical",
            status: "operational",
            incident_id: "inc-1",
            event_id: "evt-2"
          }
        ])
        const [outage] = yield* ch.query(`
          SELECT dateDiff('second', minIf(changed_at, status = 'critical'), maxIf(changed_at, status = 'operational')) AS s
          FROM status_transitions WHERE subject_id = 'github' AND component_id = 'api'`)
        assert.deepStrictEqual(outage, { s: 360 })
      }))
  })
})
