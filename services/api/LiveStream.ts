import { Clock, Effect, Layer, Stream } from "effect"
import { positiveInt } from "../platform/Settings.ts"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { ErrorBody } from "../domain/api/Errors.ts"
import { slugPattern } from "../domain/api/Stacks.ts"
import { tvTokenPattern } from "../domain/api/TvLinks.ts"
import type { Delta } from "../domain/Event.ts"
import { sessionTokenFrom } from "../identity/SessionCookie.ts"
import { Sessions } from "../identity/Sessions.ts"
import { ApiKeys } from "../orgs/ApiKeys.ts"
import { LiveTargets, type StackRef } from "../orgs/LiveTargets.ts"
import { type LiveFilter, LiveHub, type LiveMessage } from "../platform/LiveHub.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { keyLimitMessage, rateLimitedResponse } from "./RateLimited.ts"
import { RateLimiter } from "./RateLimiter.ts"

const shareTokenPattern = /^[A-Za-z0-9_-]{32}$/

/** What a stream shows: the deltas of these stacks; a share stream ends when its token is revoked. */
interface StreamTarget {
  readonly kind: "organization" | "stack" | "share" | "tv"
  readonly organizationId: string
  readonly stackId: string | ReadonlyArray<string> | undefined
  /** Still allowed? Checked at each refresh; false ends the stream. */
  readonly stillValid: Effect.Effect<boolean>
  /** Fields of the `hello` event. */
  readonly hello: Record<string, string>
}

const refuse = (status: number, body: ErrorBody) => HttpServerResponse.jsonUnsafe(body, { status })

/** A delta as streams send it: what changed, without the organization's ids or event ids. */
export const publicDelta = (delta: Delta) =>
  delta.kind === "source"
    ? {
      kind: "source" as const,
      key: delta.key,
      status: delta.status,
      previous_status: delta.previous_status,
      components: delta.components,
      incidents: delta.incidents === true,
      at: delta.at
    }
    : delta.kind === "crowd"
    ? { kind: "crowd" as const, key: delta.key, signal: delta.signal, at: delta.at }
    : { kind: "monitor" as const, id: delta.id, status: delta.state, previous_status: delta.previous_state, at: delta.at }

const frame = (message: LiveMessage): string =>
  message._tag === "delta"
    ? `id: ${message.seq}\nevent: delta\ndata: ${JSON.stringify(publicDelta(message.delta))}\n\n`
    : `id: ${message.seq}\nevent: resync\ndata: {}\n\n`

/**
 * Server-sent events of live status, on the API's port:
 *
 * - `GET /api/v1/organizations/{org}/stream[?stack=<slug>]`: the deltas of
 *   the organization's stacks (or of one), for an API key of that
 *   organization (`Authorization: Bearer`) or a portal session of one of its
 *   members (cookie `sg_session`). `{org}` is the slug or the id.
 * - `GET /api/v1/share/{token}/stream`: one public stack's deltas, for its
 *   share page; 404 once the token is revoked.
 * - `GET /api/v1/tv/{token}/stream`: the deltas of a TV link's stacks, for
 *   its wall screen; 404 once the link is revoked (or the plan lost TV
 *   dashboards), and an open stream ends at the next refresh.
 *
 * The stream starts with `retry:` and a `hello` event (server time), then
 * sends a `delta` event (id = the process's sequence number) for each change
 * of a source, component or monitor the stacks show, `resync` when the
 * client fell behind (reload state), and a `: ping` comment every
 * `LIVE_PING_MS`. Every `LIVE_REFRESH_MS` the stacks' membership is re-read
 * (items added or removed follow) and a share token re-checked (revoked: the
 * stream ends). Deltas are at most once: a client that reconnects reloads
 * state; `Last-Event-ID` is not replayed.
 */
export const LiveStreamRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const hub = yield* LiveHub
  const targets = yield* LiveTargets
  const keys = yield* ApiKeys
  const limiter = yield* RateLimiter
  const sessions = yield* Sessions
  const pingMs = yield* positiveInt("LIVE_PING_MS", 15_000).pipe(Effect.orDie)
  const refreshMs = yield* positiveInt("LIVE_REFRESH_MS", 30_000).pipe(Effect.orDie)
  const retryMs = yield* positiveInt("LIVE_RETRY_MS", 5_000).pipe(Effect.orDie)

  const open = (target: StreamTarget) => {
    const body = Stream.unwrap(Effect.gen(function*() {
      const filterOf = (): Effect.Effect<LiveFilter> => targets.filter(target.organizationId, target.stackId)
      const subscription = yield* hub.subscribe(yield* filterOf())
      yield* Effect.gen(function*() {
        yield* Effect.sleep(refreshMs)
        if (!(yield* target.stillValid)) return yield* subscription.end.pipe(Effect.andThen(Effect.interrupt))
        yield* subscription.setFilter(yield* filterOf())
      }).pipe(Effect.forever, Effect.forkScoped)
      const now = yield* Clock.currentTimeMillis
      const hello = `retry: ${retryMs}\nevent: hello\ndata: ${
        JSON.stringify({ server_time: new Date(now).toISOString(), stream: target.kind, ...target.hello })
      }\n\n`
      const pings = Stream.tick(pingMs).pipe(Stream.drop(1), Stream.map(() => ": ping\n\n"))
      return Stream.concat(
        Stream.succeed(hello),
        Stream.merge(Stream.map(subscription.messages, frame), pings, { haltStrategy: "left" })
      )
    }))
    return HttpServerResponse.stream(Stream.encodeText(body), {
      contentType: "text/event-stream; charset=utf-8",
      headers: { "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" }
    })
  }

  /** The caller's organization stream, or the error response. */
  const organizationStream = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* HttpRouter.params
    const ref = params["org"] ?? ""
    const notFound = refuse(404, { code: "not_found", field: "org", message: `no organization ${JSON.stringify(ref.slice(0, 100))} for this caller` })
    const authorization = request.headers["authorization"]
    let organization: { readonly id: string; readonly slug: string } | undefined
    if (authorization !== undefined) {
      const token = /^Bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim() ?? ""
      const principal = token === "" ? undefined : yield* keys.authenticate(token, null)
      if (principal === undefined) {
        return refuse(401, { code: "unauthorized", message: token === "" ? "an API key is required: Authorization: Bearer <key>" : "the API key is unknown or revoked" })
      }
      const decision = yield* limiter.take(principal.actor.id)
      if (!decision.allowed) {
        return rateLimitedResponse(keyLimitMessage(decision.retryAfterS), decision.retryAfterS)
      }
      organization = yield* targets.organization(ref)
      if (organization?.id !== principal.organization_id) return notFound
    } else {
      const token = sessionTokenFrom(request.headers["cookie"])
      if (token === undefined) {
        return refuse(401, { code: "unauthorized", message: "sign in, or send an API key: Authorization: Bearer <key>" })
      }
      const session = yield* sessions.resolve(token).pipe(Effect.option)
      if (session._tag === "None") return refuse(401, { code: "unauthorized", message: "your session has ended; sign in again" })
      organization = yield* targets.organization(ref)
      if (organization === undefined || !(yield* targets.isMember(organization.id, session.value.user_id))) return notFound
    }
    const org = organization
    const slug = new URL(request.url, "http://localhost").searchParams.getAll("stack")
    if (slug.length > 1 || (slug.length === 1 && !slugPattern.test(slug[0]!))) {
      return refuse(400, { code: "invalid_parameter", field: "stack", message: "stack must be given at most once, as a stack's slug" })
    }
    let stack: StackRef | undefined
    if (slug.length === 1) {
      stack = yield* targets.stackBySlug(org.id, slug[0]!)
      if (stack === undefined) return refuse(404, { code: "not_found", field: "stack", message: `no stack ${slug[0]} in this organization` })
    }
    return open({
      kind: stack === undefined ? "organization" : "stack",
      organizationId: org.id,
      stackId: stack?.id,
      stillValid: Effect.succeed(true),
      hello: { organization: org.slug, ...(slug.length === 1 ? { stack: slug[0]! } : {}) }
    })
  })

  const shareStream = Effect.gen(function*() {
    const params = yield* HttpRouter.params
    const token = params["token"] ?? ""
    const stack = shareTokenPattern.test(token) ? yield* targets.stackByShareToken(token) : undefined
    if (stack === undefined) return refuse(404, { code: "not_found", field: "token", message: "no public stack has this link" })
    return open({
      kind: "share",
      organizationId: stack.organization_id,
      stackId: stack.id,
      stillValid: Effect.map(targets.stackByShareToken(token), (now) => now?.id === stack.id),
      hello: {}
    })
  })

  const tvStream = Effect.gen(function*() {
    const params = yield* HttpRouter.params
    const token = params["token"] ?? ""
    const link = tvTokenPattern.test(token) ? yield* targets.tvLink(token) : undefined
    if (link === undefined) return refuse(404, { code: "not_found", field: "token", message: "no TV link has this token" })
    return open({
      kind: "tv",
      organizationId: link.organization_id,
      stackId: link.stack_ids,
      stillValid: Effect.map(targets.tvLink(token), (now) => now !== undefined),
      hello: {}
    })
  })

  yield* router.add("GET", "/api/v1/organizations/:org/stream", organizationStream)
  yield* router.add("GET", "/api/v1/tv/:token/stream", tvStream)
  yield* router.add("GET", "/api/v1/share/:token/stream", shareStream)
}))

/**
 * The routes with what they need below the process's SqlClient and Bus. `LiveHub.layer` is one
 * per process: build it before the server (services/api/Http.ts does) and the router's build
 * reuses that instance; otherwise the routes build their own.
 */
export const LiveRoutes = LiveStreamRoutes.pipe(
  Layer.provide(Layer.mergeAll(LiveHub.layer, LiveTargets.layer, ApiKeys.layer, RateLimiter.layer, Sessions.layer)),
  Layer.provide(SecretBox.layer)
)

/**
 * Ends the open event streams when the process stops: build `LiveHub.layer`,
 * then the HTTP server, then this, so this finalizer runs before the server
 * waits for open responses (up to its 20 s graceful timeout).
 */
export const closeStreamsOnShutdown = Layer.effectDiscard(
  Effect.gen(function*() {
    const hub = yield* LiveHub
    yield* Effect.addFinalizer(() => hub.closeAll)
  })
)
