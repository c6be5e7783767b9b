import { describe, expect, it } from "vitest"
import { childEnv, runCli } from "../support/process.ts"
import { testDatabaseUrl, testRedisUrl } from "../support/stores.ts"

/**
 * `statusgrid bench soak` at a small scale: 200 sources, 200 monitors, one minute in four 15-s periods,
 * each store cut for 5 s across a period boundary. The run creates (and drops) its own PostgreSQL
 * database and flushes Redis database 10, its own: not the soak's default (12), so a soak run by hand
 * meanwhile keeps its state (a test run beside a 60-minute soak once flushed the soak's events).
 */
const redisUrl = (() => {
  const u = new URL(testRedisUrl)
  u.pathname = "/10"
  return u.toString()
})()

const args = [
  "bench", "soak", "--minutes", "1", "--sources", "200", "--monitors", "200", "--outage-seconds", "5", "--period", "15",
  "--warmup", "0", "--settle", "20", "--postgres", testDatabaseUrl, "--redis", redisUrl
]

interface Line {
  readonly bench: string
  readonly minute: number
  readonly outage: string | null
  readonly cut_while_measured: string | null
  readonly rss_mb: number
  readonly event_loop_delay_p99_ms: number | null
  readonly lag_p99_ms: number | null
  readonly checks: number | null
  readonly rows_stored: number | null
  readonly rows_behind: number | null
  readonly events_published: number
  readonly deliveries: number
  readonly deliveries_expected: number
  readonly metrics: Record<string, unknown> | null
}

describe("statusgrid bench soak", () => {
  it("runs the demo world through an outage of each store: a line per period, every check stored and every flip delivered once", async () => {
    const { code, stdout, stderr } = await runCli(args, childEnv({}))
    // On a failure, the end of stderr says why.
    expect({ code, stderr: code === 0 ? "" : stderr.slice(-3000) }).toEqual({ code: 0, stderr: "" })

    // One JSON line on stdout (the summary), one per period on stderr.
    const out = stdout.trim().split("\n")
    expect(out).toHaveLength(1)
    const summary = JSON.parse(out[0]!)
    const lines = stderr.split("\n").filter((l) => l.startsWith(`{"bench":"soak"`)).map((l) => JSON.parse(l) as Line)
    expect(lines.map((l) => l.minute)).toEqual([0.25, 0.5, 0.75, 1])
    for (const line of lines) {
      expect(line.rss_mb).toBeGreaterThan(50)
      expect(line.event_loop_delay_p99_ms).toBeTypeOf("number")
      expect(line.lag_p99_ms).toBeTypeOf("number")
      expect(line.checks).toBeGreaterThan(0)
      expect(line.rows_stored).toBeTypeOf("number")
      expect(line.events_published).toBeTypeOf("number")
      expect(line.deliveries).toBeLessThanOrEqual(line.deliveries_expected)
      expect(line).toHaveProperty("metrics")
    }
    expect(lines.map((l) => l.cut_while_measured)).toEqual(["postgres", "redis", "clickhouse", null])
    expect(summary.minutes_figures).toEqual(lines.map(({ bench: _, ...figures }) => figures))

    expect(summary).toMatchObject({ bench: "soak", sources: 200, monitors: 200, periods: 4 })
    expect(summary.outages.map((o: { store: string }) => o.store)).toEqual(["postgres", "redis", "clickhouse"])
    // ClickHouse away: rows fall behind the checks, then catch up once it is back (the writer retries, or spills and replays).
    const [clickhouse] = summary.clickhouse_outages
    expect(clickhouse.rows_behind_while_cut).toBeGreaterThan(0)
    expect(clickhouse.caught_up_by_minute).not.toBeNull()
    expect(summary.rows_caught_up).toBe(true)
    expect(summary.rows_stored).toBeGreaterThanOrEqual(summary.checks)
    // Every change of a flipped source's component the rule triggers on was delivered, once.
    expect(summary.flips.observed).toBeGreaterThan(0)
    expect(summary.deliveries.expected).toBeGreaterThanOrEqual(summary.flips.observed)
    expect(summary.deliveries).toMatchObject({ missing: 0, unexpected: 0, bad_signatures: 0 })
    expect(summary.deliveries.delivered).toBe(summary.deliveries.expected)
    expect(summary.rss_mb.max).toBeGreaterThanOrEqual(summary.rss_mb.min)
    expect(summary.cpu.statusgrid).toBeGreaterThan(0)
  }, 240_000)
})
