import { Cause, Config, Context, Effect, Exit, Layer, References, Result, Schema, SchemaIssue } from "effect"
import { HttpApi, HttpApiError } from "effect/http-api"
import { IpNetwork, NetAddress } from "effect/net"
import type { IncomingMessage, ServerResponse } from "node:http"
import { CrowdReports } from "../../crowd/CrowdReports.ts"
import { Api } from "../../domain/api/Api.ts"
import { CrowdReportAccepted, CrowdReportCreate } from "../../domain/api/Crowd.ts"
import { InternalError, InvalidParameter, NotFound, type RateLimited } from "../../domain/api/Errors.ts"
import { Sessions } from "../../identity/Sessions.ts"
import * as Metrics from "../../platform/Metrics.ts"
import { DirectRequests } from "../DirectRequests.ts"
import { internalError, invalidParameter } from "../ApiErrorValues.ts"
import { rateLimitedBody } from "../RateLimited.ts"
import { mediaTypeOf, nulPath } from "../RequestBody.ts"
import { PublicHttps, securityHeadersFor } from "../SecurityHeaders.ts"
import { TrustedProxiesConfig } from "../TrustedProxies.ts"
import { crowdReportsLayer, reporterOf } from "./http.ts"

/** `POST /api/v1/sources/{key}/reports`, the key a plain path segment (one with `%` goes to the router, which decodes it). */
const reportPath = /^\/api\/v1\/sources\/([^/?#%]{1,1024})\/reports$/u

/** The largest body taken here; a larger one goes to the router and its limits. A report's body is about 30-150 bytes. */
const maxDirectBody = 16 * 1024

/** The route of the request metrics (services/api/RequestMetrics.ts `routeOf`: the endpoint's template). */
const route = "/api/v1/sources/:key/reports"

const encodeAccepted = Schema.encodeSync(Schema.toCodecJson(CrowdReportAccepted))
const encodeInvalid = Schema.encodeSync(Schema.toCodecJson(InvalidParameter))
const encodeNotFound = Schema.encodeSync(Schema.toCodecJson(NotFound))
const encodeInternal = Schema.encodeSync(Schema.toCodecJson(InternalError))
const decodeReport = Schema.decodeUnknownExit(CrowdReportCreate)
/** As the API decodes every payload: its `PayloadParseOptions` (services/domain/api/Api.ts). */
const parseOptions = Context.getOrUndefined(Api.annotations, HttpApi.PayloadParseOptions)

interface Answer {
  readonly status: number
  readonly body: unknown
  readonly headers?: Record<string, string>
}

const invalid = (error: InvalidParameter): Answer => ({ status: 400, body: encodeInvalid(error) })

/** What the API answers for a failed report: the typed errors as their schemas encode them, anything else a logged 500. */
const failureAnswer = (cause: Cause.Cause<NotFound | InvalidParameter | RateLimited>): Answer => {
  const error = Cause.findErrorOption(cause)
  if (error._tag === "Some") {
    const e = error.value
    if (e._tag === "NotFound") return { status: 404, body: encodeNotFound(e) }
    if (e._tag === "InvalidParameter") return invalid(e)
    return {
      status: 429,
      body: rateLimitedBody(e.message, e.retry_after_s),
      headers: { "retry-after": String(e.retry_after_s) }
    }
  }
  return { status: 500, body: encodeInternal(internalError()) }
}

const failed = (cause: Schema.SchemaError) => invalidParameter(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause }))

/**
 * The report body's checks, in the order the API makes them (services/api/RequestBody.ts, then the
 * endpoint's decoding): JSON, no NUL anywhere, then `CrowdReportCreate`.
 */
const readPayload = (text: string): CrowdReportCreate | InvalidParameter => {
  let parsed: unknown = undefined
  if (text !== "") {
    try {
      parsed = JSON.parse(text)
    } catch {
      return failed(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" })))
    }
  }
  const field = nulPath(parsed)
  if (field !== undefined) return new InvalidParameter({ field, message: `${field} must not contain NUL characters` })
  const decoded = decodeReport(parsed, parseOptions)
  if (Exit.isSuccess(decoded)) return decoded.value
  const schemaError = Cause.findErrorOption(decoded.cause)
  if (schemaError._tag === "Some") return failed(schemaError.value)
  throw Cause.squash(decoded.cause)
}

/**
 * The crowd's report ingest on Node's request and response (decision 0032): the same checks, the
 * same `CrowdReports.report`, the same answer, security headers and request metrics as through the
 * router, for the common request (a small JSON body of known length, the key a plain segment, the
 * client not behind a trusted proxy); any other goes to the router. Off while traces are exported
 * or the access log is on (the router's spans and lines), and with `CROWD_DIRECT_REPORTS=false`.
 */
export const CrowdIngestLive = Layer.effectDiscard(Effect.gen(function*() {
  const enabled = yield* Config.Boolean("CROWD_DIRECT_REPORTS").pipe(Config.withDefault(true))
  const accessLog = yield* Config.Boolean("HTTP_ACCESS_LOG").pipe(Config.withDefault(false))
  const tracing = yield* References.TracerEnabled
  const direct = yield* Effect.serviceOption(DirectRequests)
  if (!enabled || accessLog || tracing || direct._tag === "None") return
  const crowd = yield* CrowdReports
  const reporter = reporterOf(yield* Sessions)
  const https = yield* PublicHttps
  const trusted = yield* TrustedProxiesConfig
  const context = yield* Effect.context<never>()
  const security = securityHeadersFor(https, {})
  const run = Effect.runForkWith(context)

  /** A request from a trusted proxy goes to the router, which takes the client's address from X-Forwarded-For. */
  const fromTrustedProxy = (peer: string | undefined): boolean => {
    if (trusted.length === 0 || peer === undefined) return false
    const address = NetAddress.ipFromString(peer)
    if (Result.isFailure(address)) return false
    const canonical = NetAddress.toCanonical(address.success)
    return trusted.some((network) => IpNetwork.contains(network, canonical))
  }

  const answer = (response: ServerResponse, started: number, a: Answer) => {
    const text = JSON.stringify(a.body)
    response.writeHead(a.status, {
      ...security,
      ...a.headers,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text)
    })
    response.end(text)
    Metrics.count(Metrics.httpRequests, { route, method: "POST", status: String(a.status) })
    Metrics.observe(Metrics.httpSeconds, { route, method: "POST" }, (performance.now() - started) / 1000)
  }

  yield* direct.value.register((request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== "POST" || request.httpVersionMajor !== 1) return false
    const match = reportPath.exec(request.url ?? "")
    if (match === null) return false
    const headers = request.headers
    const length = Number(headers["content-length"])
    if (headers["transfer-encoding"] !== undefined || !(length >= 0 && length <= maxDirectBody)) return false
    if (mediaTypeOf(headers["content-type"]) !== "application/json") return false
    const peer = request.socket.remoteAddress
    if (fromTrustedProxy(peer)) return false
    const started = performance.now()
    const key = match[1]!
    let text = ""
    // A client gone mid-body: nothing to answer (Node closes the socket); the report was not taken.
    request.on("error", () => {})
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => {
      text += chunk
    })
    request.on("end", () => {
      run(Effect.gen(function*() {
        const payload = readPayload(text)
        if (payload instanceof InvalidParameter) return invalid(payload)
        const accepted = yield* crowd.report({
          sourceKey: key,
          symptom: payload.symptom,
          componentId: payload.component_id,
          region: payload.region,
          address: peer ?? "unknown",
          userId: yield* reporter(headers["cookie"])
        })
        return { status: 202, body: encodeAccepted(accepted) }
      }).pipe(
        // As ApiErrorsLive: typed errors answered by their schemas, anything else logged and a 500.
        Effect.catchCause((cause) =>
          Cause.hasFails(cause)
            ? Effect.succeed(failureAnswer(cause))
            : Effect.logError("API request failed", cause).pipe(Effect.annotateLogs({ endpoint: "crowd.report" }), Effect.as(failureAnswer(cause)))
        ),
        Effect.map((a) => answer(response, started, a))
      ))
    })
    return true
  })
})).pipe(Layer.provide(Layer.mergeAll(crowdReportsLayer, Sessions.layer)))
