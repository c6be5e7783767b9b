import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, type Scope } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

/**
 * A handler of requests answered on Node's own request and response, before Effect's HTTP server
 * sees them: it returns true when it takes the request (and then answers it), false to leave it to
 * the router.
 */
export type DirectHandler = (request: IncomingMessage, response: ServerResponse) => boolean

/**
 * The requests the process answers without Effect's router (decision 0032): the crowd's report
 * ingest, whose answer through the router, HttpApi and the middlewares costs more CPU than the report
 * itself. Handlers register while the routes are built and are asked in order for each request; a
 * request none takes goes to the router as usual.
 */
export class DirectRequests extends Context.Service<DirectRequests, {
  /** Adds a handler for the scope's lifetime. */
  readonly register: (handler: DirectHandler) => Effect.Effect<void, never, Scope.Scope>
  /** Whether a registered handler took the request. */
  readonly take: DirectHandler
  /** Requests taken since the start. */
  readonly taken: () => number
}>()("statusgrid/api/DirectRequests") {
  static readonly layer = Layer.sync(DirectRequests, () => {
    let handlers: ReadonlyArray<DirectHandler> = []
    let taken = 0
    return DirectRequests.of({
      register: (handler) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            handlers = [...handlers, handler]
          }),
          () =>
            Effect.sync(() => {
              handlers = handlers.filter((h) => h !== handler)
            })
        ),
      take: (request, response) => {
        for (const handler of handlers) {
          if (handler(request, response)) {
            taken++
            return true
          }
        }
        return false
      },
      taken: () => taken
    })
  })
}

/**
 * A Node HTTP server whose `request` events go to `direct` first; those it does not take reach the
 * listeners (Effect's server) as usual.
 */
const serverWith = (direct: DirectRequests["Service"]) => {
  const server = createServer()
  const emit = server.emit.bind(server)
  server.emit = ((event: string, ...args: Array<unknown>) => {
    if (event === "request" && direct.take(args[0] as IncomingMessage, args[1] as ServerResponse)) return true
    return emit(event, ...args)
  }) as typeof server.emit
  return server
}

/** `NodeHttpServer.layer` over a server that asks `DirectRequests` first, with `DirectRequests` for the routes to register in. */
export const directServerLayer = (options: Parameters<typeof NodeHttpServer.layer>[1]) =>
  Layer.unwrap(Effect.gen(function*() {
    const direct = yield* DirectRequests
    return NodeHttpServer.layer(() => serverWith(direct), options)
  })).pipe(
    Layer.provideMerge(DirectRequests.layer)
  )
