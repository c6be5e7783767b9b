import { Effect, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { describe, expect, it } from "vitest"
import { bucketsOf, byLabel, countOf, parseMetrics, valueOf, valueOrNull } from "./prometheus.ts"

/** Effect's own formatter on a registry of the test's, read back by the parser. */
const formatted = Effect.gen(function*() {
  const requests = Metric.counter("t_requests_total", { incremental: true })
  const lag = Metric.histogram("t_lag_seconds", { boundaries: [0.01, 0.1, 1] })
  yield* Metric.update(Metric.withAttributes(requests, { route: "/a", status: "200" }), 3)
  yield* Metric.update(Metric.withAttributes(requests, { route: "/b", status: "500" }), 2)
  for (const [kind, value] of [["source", 0.005], ["source", 0.05], ["monitor", 0.5], ["monitor", 5]] as const) {
    yield* Metric.update(Metric.withAttributes(lag, { kind }), value)
  }
  return yield* PrometheusMetrics.format()
}).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))

describe("reading /metrics", () => {
  it("counters by labels; labelled histograms keep each series' buckets and count", () => {
    const scraped = parseMetrics(Effect.runSync(formatted))
    expect(scraped.get("t_requests_total")?.type).toBe("COUNTER")
    expect(valueOf(scraped, "t_requests_total")).toBe(5)
    expect(valueOf(scraped, "t_requests_total", { status: "500" })).toBe(2)
    expect(byLabel(scraped, "t_requests_total", "route")).toEqual({ "/a": 3, "/b": 2 })
    expect(valueOrNull(scraped, "absent_total")).toBeNull()
    expect(scraped.get("t_lag_seconds")?.type).toBe("HISTOGRAM")
    expect(countOf(scraped, "t_lag_seconds", { kind: "source" })).toBe(2)
    expect(countOf(scraped, "t_lag_seconds")).toBe(4)
    expect(bucketsOf(scraped, "t_lag_seconds", { kind: "monitor" })).toEqual(new Map([[0.01, 0], [0.1, 0], [1, 1], [Infinity, 2]]))
    expect(bucketsOf(scraped, "t_lag_seconds")?.get(0.1)).toBe(2)
  })
})
