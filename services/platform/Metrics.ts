import { Context, Effect, Layer, Metric, Schedule } from "effect"
import { beyondResolutionMs, eventLoopDelay as loopDelayHistogram } from "./EventLoopDelay.ts"

/**
 * The process's metrics, in one place: Effect `Metric`s in the process-wide registry, served in the
 * Prometheus text format by `GET /metrics` (services/api/MetricsRoute.ts, Effect's PrometheusMetrics)
 * and described family by family in infra/observability/README.md.
 *
 * Counters and histograms are updated where the thing happens (`count`, `observe`, synchronous, so
 * the pollers' hot paths need no extra effect); gauges of a component's state are read when scraped
 * (`gauges`, registered for the component's lifetime). A series shows once it has a value, so the
 * families with fixed labels are given theirs at start (`declare`): a scrape lists every family from
 * the first one.
 */

/** Every update and read goes to the process-wide registry (the default of `Metric.MetricRegistry`). */
const registry = Context.empty()

const secondsBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

// Poller ----------------------------------------------------------------------------------------

export type CheckKind = "source" | "monitor"
export type CheckOutcome = "fresh" | "not_modified" | "failed"

export const checks = Metric.counter("statusgrid_checks_total", {
  description: "Checks made by this process's pollers, by kind (source: a status page; monitor: a website monitor) and outcome",
  incremental: true
})
export const scheduleLag = Metric.histogram("statusgrid_schedule_lag_seconds", {
  description: "How late a check started against its planned time",
  boundaries: secondsBuckets
})
export const statusChanges = Metric.counter("statusgrid_status_changes_total", {
  description: "Checks that changed what statusgrid knows (a status, a component, an incident)",
  incremental: true
})
export const shards = Metric.gauge("statusgrid_shards", { description: "Poller shards running in this process" })
export const shardStarts = Metric.counter("statusgrid_shard_starts_total", {
  description: "Poller shards started in this process (more than its share: shards moved here)",
  incremental: true
})
export const shardStops = Metric.counter("statusgrid_shard_stops_total", {
  description: "Poller shards stopped in this process (moved away, or the process stops)",
  incremental: true
})
export const scheduled = Metric.gauge("statusgrid_scheduled", {
  description: "Sources and monitors scheduled on this process's shards"
})
export const unsavedSnapshots = Metric.gauge("statusgrid_unsaved_snapshots", {
  description: "Changed snapshots this process's shards hold until PostgreSQL takes them (latest per source)"
})

// ClickHouse writers ------------------------------------------------------------------------------

export const batchRows = Metric.histogram("statusgrid_clickhouse_batch_rows", {
  description: "Rows per ClickHouse insert, by table",
  boundaries: [1, 10, 50, 100, 250, 500, 1000, 2000, 5000, 10000, 50000]
})
export const insertSeconds = Metric.histogram("statusgrid_clickhouse_insert_seconds", {
  description: "Duration of a ClickHouse insert attempt, by table and outcome",
  boundaries: secondsBuckets
})
export const rowsWritten = Metric.counter("statusgrid_clickhouse_rows_written_total", {
  description: "Rows stored in ClickHouse, by table",
  incremental: true
})
export const insertFailures = Metric.counter("statusgrid_clickhouse_insert_failures_total", {
  description: "Failed ClickHouse insert attempts (each retry counts), by table",
  incremental: true
})
export const bufferedRows = Metric.gauge("statusgrid_clickhouse_buffered_rows", {
  description: "Rows in memory waiting for ClickHouse, by table"
})
export const spillRows = Metric.gauge("statusgrid_clickhouse_spill_rows", {
  description: "Rows in spill files on disk waiting for ClickHouse, by table"
})
export const spillFiles = Metric.gauge("statusgrid_clickhouse_spill_files", {
  description: "Spill files on disk waiting for ClickHouse, by table"
})

// Bus ---------------------------------------------------------------------------------------------

export const changesPublished = Metric.counter("statusgrid_bus_changes_published_total", {
  description: "Changes (state, delta, events) applied to the bus, by kind",
  incremental: true
})
export const eventsPublished = Metric.counter("statusgrid_bus_events_published_total", {
  description: "Events appended to the bus's event stream (sg:events)",
  incremental: true
})
export const publishFailures = Metric.counter("statusgrid_bus_publish_failures_total", {
  description: "Bus writes refused (each is retried; the change waits in the buffer)",
  incremental: true
})
export const publishBacklog = Metric.gauge("statusgrid_bus_buffer_depth", {
  description: "Changes waiting to be applied to the bus, in memory or spilled to disk"
})

// Notifier ----------------------------------------------------------------------------------------

export const notifierEvents = Metric.counter("statusgrid_notifier_events_total", {
  description: "Events the notifier read from the event stream, by outcome (handled: matched against the rules; malformed)",
  incremental: true
})
export const alertsMade = Metric.counter("statusgrid_notifier_alerts_total", {
  description: "Alerts the notifier made: a rule matched an event (each sends one delivery per channel)",
  incremental: true
})
export const outboxDepth = Metric.gauge("statusgrid_outbox_depth", {
  description: "Deliveries in the outbox, by status (pending: waiting or retrying; sending: claimed by a worker)"
})
export const deliveries = Metric.counter("statusgrid_deliveries_total", {
  description: "Delivery attempts, by channel type and outcome (delivered, retry, failed)",
  incremental: true
})
export const deliverySeconds = Metric.histogram("statusgrid_delivery_seconds", {
  description: "Duration of a delivery attempt (the channel's answer), by channel type",
  boundaries: secondsBuckets
})

// API and portal ----------------------------------------------------------------------------------

export const httpRequests = Metric.counter("statusgrid_http_requests_total", {
  description: "HTTP requests answered, by route (an OpenAPI path template, or page/asset/health), method and status",
  incremental: true
})
export const httpSeconds = Metric.histogram("statusgrid_http_request_seconds", {
  description: "Time to answer an HTTP request (until the answer starts), by route and method",
  boundaries: secondsBuckets
})
export const liveClients = Metric.gauge("statusgrid_sse_clients", {
  description: "Open live-update streams (server-sent events) of this process"
})

// Process -----------------------------------------------------------------------------------------

export const cpuSeconds = Metric.counter("process_cpu_seconds_total", {
  description: "CPU time of this process (user and system, all threads)"
})
export const residentMemory = Metric.gauge("process_resident_memory_bytes", { description: "Resident set size of this process" })
export const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "V8 heap in use" })
export const startTime = Metric.gauge("process_start_time_seconds", {
  description: "When this process started, Unix time (several processes may answer on one port: HTTP_PROCESSES)"
})
export const eventLoopDelay = Metric.gauge("statusgrid_event_loop_delay_seconds", {
  description: "Event-loop delay over the last 10 s, by quantile (0.5, 0.99, 1 for the maximum)"
})

// Updating ----------------------------------------------------------------------------------------

/** A labelled series of a metric, made once per label set (each update would otherwise rebuild its key). */
const seriesCache = new WeakMap<object, Map<string, Metric.Metric<never, unknown>>>()
const series = <M extends Metric.Metric<never, unknown>>(metric: M, attributes: Metric.Metric.AttributeSet): M => {
  let byLabels = seriesCache.get(metric)
  if (byLabels === undefined) seriesCache.set(metric, byLabels = new Map())
  let key = ""
  for (const name in attributes) key += `${name}=${attributes[name]}\u0000`
  let found = byLabels.get(key)
  if (found === undefined) byLabels.set(key, found = Metric.withAttributes(metric, attributes))
  return found as M
}

/** Adds to a counter (synchronous: usable in the hot paths). */
export const count = (metric: Metric.Counter<number>, attributes: Metric.Metric.AttributeSet, amount = 1): void => {
  series(metric, attributes).updateUnsafe(amount, registry)
}

/** One observation of a histogram. */
export const observe = (metric: Metric.Histogram<number>, attributes: Metric.Metric.AttributeSet, value: number): void => {
  series(metric, attributes).updateUnsafe(value, registry)
}

/** Sets a gauge. */
export const set = (metric: Metric.Gauge<number>, attributes: Metric.Metric.AttributeSet, value: number): void => {
  series(metric, attributes).updateUnsafe(value, registry)
}

const noop = () => {}

/**
 * Gauges read from a component when scraped, for the scope's lifetime (the component's): each pair is
 * a gauge with its labels and how to read it.
 */
export const gauges = (reads: ReadonlyArray<readonly [Metric.Gauge<number>, Metric.Metric.AttributeSet, () => number]>) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      reads.map(([metric, attributes, read]) =>
        Metric.registerUnsafe(series(metric, attributes), registry, {
          get: () => ({ value: read() }),
          update: noop,
          modify: noop
        })
      )
    ),
    (registrations) => Effect.sync(() => registrations.forEach((r) => r.remove()))
  )

/** The series with fixed labels, at zero, so that a scrape lists each family before its first use. */
const declare = () => {
  for (const kind of ["source", "monitor"] as const) {
    for (const outcome of ["fresh", "not_modified", "failed"] as const) count(checks, { kind, outcome }, 0)
    count(statusChanges, { kind }, 0)
    count(changesPublished, { kind }, 0)
  }
  count(shardStarts, {}, 0)
  count(shardStops, {}, 0)
  for (const table of ["check_results", "status_transitions"]) {
    count(rowsWritten, { table }, 0)
    count(insertFailures, { table }, 0)
  }
  count(eventsPublished, {}, 0)
  count(publishFailures, {}, 0)
  for (const outcome of ["handled", "malformed"]) count(notifierEvents, { outcome }, 0)
  count(alertsMade, {}, 0)
}

/** A delay sample (nanoseconds) in seconds beyond the sampling interval (services/platform/EventLoopDelay.ts). */
const seconds = (ns: number) => beyondResolutionMs(ns) / 1000

/**
 * The process's own figures: CPU (a counter read when scraped), RSS and heap, and the event loop's
 * delay over the last 10 s (`perf_hooks.monitorEventLoopDelay`, sampled every 20 ms, beyond those 20 ms).
 */
export const ProcessMetricsLive = Layer.effectDiscard(Effect.gen(function*() {
  declare()
  yield* Effect.acquireRelease(
    Effect.sync(() =>
      Metric.registerUnsafe(cpuSeconds, registry, {
        get: () => {
          const usage = process.cpuUsage()
          return { count: (usage.user + usage.system) / 1e6, incremental: true }
        },
        update: noop,
        modify: noop
      })
    ),
    (registration) => Effect.sync(() => registration.remove())
  )
  yield* gauges([
    [residentMemory, {}, () => process.memoryUsage.rss()],
    [heapUsed, {}, () => process.memoryUsage().heapUsed]
  ])
  set(startTime, {}, Math.round(Date.now() - process.uptime() * 1000) / 1000)
  const delay = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const histogram = loopDelayHistogram()
      histogram.enable()
      return histogram
    }),
    (histogram) => Effect.sync(() => histogram.disable())
  )
  const sample = Effect.sync(() => {
    set(eventLoopDelay, { quantile: "0.5" }, seconds(delay.percentile(50)))
    set(eventLoopDelay, { quantile: "0.99" }, seconds(delay.percentile(99)))
    set(eventLoopDelay, { quantile: "1" }, seconds(delay.max))
    delay.reset()
  })
  yield* sample
  yield* sample.pipe(Effect.repeat(Schedule.spaced("10 seconds")), Effect.forkScoped)
}))
