import { Config, Effect, Layer, Option, References, type Tracer } from "effect"
import { FetchHttpClient, HttpMiddleware } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"
import { version } from "./Version.ts"

/** The OTLP/HTTP encodings statusgrid sends; gRPC is not offered (no gRPC client in the process). */
const Protocol = (name: string) => Config.Literals(["http/protobuf", "http/json"], name)

const endpointOf = Effect.gen(function*() {
  const traces = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
  if (Option.isSome(traces) && traces.value.trim() !== "") return traces.value.trim()
  const base = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT"))
  if (Option.isNone(base) || base.value.trim() === "") return undefined
  // The signal's path is appended to the base endpoint (OpenTelemetry's exporter specification).
  return base.value.trim().replace(/\/+$/, "") + "/v1/traces"
})

/**
 * Traces over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
 * is set, by Effect's own exporter (effect/observability OtlpTracer); without it no exporter runs and
 * spans stay in the process. The OpenTelemetry variables keep their meaning: `OTEL_SDK_DISABLED`,
 * `OTEL_TRACES_EXPORTER=none`, `OTEL_EXPORTER_OTLP_PROTOCOL` / `_TRACES_PROTOCOL` (`http/protobuf`,
 * the default, or `http/json`), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME` (default
 * `statusgrid`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_SCHEDULE_DELAY` (ms between exports, default
 * 5,000). Each source check, monitor check, API request and delivery attempt is the root of its own
 * trace (infra/observability/README.md).
 */
export const TracingLive = Layer.unwrap(Effect.gen(function*() {
  const disabled = yield* Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false))
  const exporter = yield* Config.String("OTEL_TRACES_EXPORTER").pipe(Config.withDefault("otlp"))
  const url = yield* endpointOf
  // Nothing exports the spans: none is made. Each `withSpan` is then a no-op span (no clock reads, no
  // attributes, nothing ended), where Effect's own tracer would build and end one per check and per
  // request for nobody.
  if (disabled || url === undefined || exporter.trim().toLowerCase() === "none") return Layer.succeed(References.TracerEnabled, false)
  const protocol = yield* Config.option(Protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")).pipe(
    Effect.flatMap((own) => Option.isSome(own) ? Effect.succeed(own.value) : Protocol("OTEL_EXPORTER_OTLP_PROTOCOL").pipe(Config.withDefault("http/protobuf")))
  )
  const headers = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_HEADERS"))
  const delayMs = yield* Config.Int("OTEL_BSP_SCHEDULE_DELAY").pipe(Config.withDefault(5000))
  const serviceName = yield* Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("statusgrid"))
  yield* Effect.logInfo("exporting traces over OTLP").pipe(Effect.annotateLogs({ url, protocol }))
  // The probes and the scrapes are not traced: they would be most of the traces and tell nothing.
  const untraced = HttpMiddleware.layerTracerDisabledForUrls(["/healthz", "/readyz", "/metrics"])
  return Layer.merge(untraced, OtlpTracer.layer({
    url,
    resource: { serviceName, serviceVersion: version },
    headers: Option.match(headers, { onNone: () => undefined, onSome: parseHeaders }),
    exportInterval: `${Math.max(100, delayMs)} millis`
  }).pipe(
    Layer.provide(protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer)
  ))
}).pipe(Effect.orDie))

/**
 * `Effect.withSpan` while the fiber traces (`References.TracerEnabled`, which `TracingLive` turns off
 * when nothing exports spans); the effect itself otherwise. With tracing off Effect still makes a
 * no-op span for each `withSpan` and provides it to the effect (the fiber's context copied and
 * restored): about 8 µs a call on this machine against 0.4 µs without (2026-11-29). The hot paths
 * (a check, its requests) pay that only when the spans go somewhere.
 */
export const withSpanWhenTracing = <A, E, R>(self: Effect.Effect<A, E, R>, name: string, options?: Tracer.SpanOptions): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => fiber.getRef(References.TracerEnabled) ? Effect.withSpan(self, name, options) : self)

/**
 * `Effect.fn(name)` for the functions every request or check calls: the body's effect gets its span
 * only while the fiber traces (`withSpanWhenTracing`). `Effect.fn` with tracing off still makes a
 * no-op span per call, plus an `Error` for the call site and a stack frame in the fiber's context;
 * give it the body as `Effect.fnUntraced(function*(…) {…})`.
 */
export const fnWhenTracing = (name: string) =>
<Args extends ReadonlyArray<unknown>, A, E, R>(body: (...args: Args) => Effect.Effect<A, E, R>) =>
(...args: Args): Effect.Effect<A, E, R> => withSpanWhenTracing(body(...args), name, noCallSite)

/**
 * Trace options of the hot paths' spans (a check, its requests): no call-site stack, which costs a
 * `new Error()` per span; the span's name says where it starts.
 */
export const noCallSite = { captureStackTrace: false } as const

/** `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2`, values URL-encoded. */
const parseHeaders = (text: string): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const pair of text.split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim())
  }
  return headers
}
