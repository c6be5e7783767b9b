import { Layer } from "effect"
import type { Sharding } from "effect/cluster"
import { crowdReportsLayer } from "../api/Crowd/http.ts"
import * as Http from "../api/Http.ts"
import * as CrowdWorker from "../crowd/CrowdWorker.ts"
import { Health } from "../platform/Health.ts"
import * as HttpProcesses from "./httpProcesses.ts"
import * as ShardReloads from "../poller/ShardReloads.ts"
import * as Cluster from "../poller/Cluster.ts"
import { version } from "../platform/Version.ts"
import * as Consumer from "../notifier/Consumer.ts"
import * as Deliverer from "../notifier/Deliverer.ts"
import * as Poller from "../poller/Poller.ts"
import * as ReportWorker from "../reports/ReportWorker.ts"
import { Publisher } from "../platform/Publisher.ts"
import { ProcessMetricsLive } from "../platform/Metrics.ts"
import { TracingLive } from "../platform/Tracing.ts"

/**
 * What a serving process runs until stopped: the pollers on `cluster`, the notifier (events matched
 * against rules into the outbox, and the outbox's delivery worker), the scheduled reports' worker, the crowd's worker
 * (signals scored again as reports age, official onsets read from the event stream), the pollers' stats log line
 * (`POLLER_STATS_LOG_MS`), and the HTTP server, which gets the pollers' ShardReloads so that API edits
 * reach their shard at once. One Publisher serves the pollers and the API (manual custom sources).
 * With `HTTP_PROCESSES` above 1, that many HTTP processes in all share its port (services/cli/httpProcesses.ts).
 * Observability: the process's own metrics (CPU, memory, event-loop delay) beside everyone's, served at
 * `/metrics`; traces over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (TracingLive, provided to all).
 */
export const serve = <E, R>(cluster: Layer.Layer<Sharding.Sharding, E, R>) =>
  Layer.launch(Layer.mergeAll(
    Http.serverLayerWith({ announce: "start", alongside: HttpProcesses.layer }).pipe(
      Layer.provide(Health.layer(version)),
      Layer.provideMerge(Poller.statsLog.pipe(Layer.provideMerge(Poller.layer.pipe(Layer.provide(cluster)))))
    ),
    Deliverer.serviceLayer,
    Consumer.layer,
    ReportWorker.layer,
    CrowdWorker.layer.pipe(Layer.provide(crowdReportsLayer)),
    ProcessMetricsLive
  ).pipe(Layer.provide(Publisher.layer), Layer.provide(TracingLive)))

/**
 * What an HTTP-only process (`statusgrid http`) runs until stopped: the same HTTP server, with API edits
 * reaching their poller shard through the cluster as a client (it runs no shard), and the process's
 * metrics and traces. No pollers, notifier or workers: the runners run those.
 */
export const serveHttp = Layer.launch(Layer.mergeAll(
  Http.serverLayerWith({ announce: "http-only" }).pipe(
    Layer.provide(Health.layer(version)),
    Layer.provide(ShardReloads.layer.pipe(Layer.provide(Cluster.client)))
  ),
  ProcessMetricsLive
).pipe(Layer.provide(Publisher.layer), Layer.provide(TracingLive)))
