import { Config, Effect, Option, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { timingSafeEqual } from "node:crypto"

const sameText = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/**
 * `GET /metrics`: the process's metrics (services/platform/Metrics.ts, Effect's cluster metrics) in
 * the Prometheus text format, by Effect's own formatter. Open by default, as the health routes are;
 * with `METRICS_TOKEN` set a scrape must send `Authorization: Bearer <token>` (401 otherwise).
 */
export const MetricsRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const token = yield* Config.option(Config.Redacted("METRICS_TOKEN"))
  yield* router.add("GET", "/metrics", Effect.gen(function*() {
    if (Option.isSome(token)) {
      const request = yield* HttpServerRequest.HttpServerRequest
      const sent = request.headers.authorization ?? ""
      if (!sameText(sent, `Bearer ${Redacted.value(token.value)}`)) {
        return HttpServerResponse.text("metrics need Authorization: Bearer <METRICS_TOKEN>\n", {
          status: 401,
          headers: { "www-authenticate": "Bearer" }
        })
      }
    }
    const body = yield* PrometheusMetrics.format()
    return HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
  }))
}))
