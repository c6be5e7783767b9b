import { Config, Effect, Layer } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Fs from "node:fs"
import { STATUS_CODES } from "node:http"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { Analytics } from "../history/Analytics.ts"
import { crowdReportsLayer, peerAddress, peerHeader } from "./Crowd/http.ts"
import { StatusHistory } from "../history/StatusHistory.ts"
import { Oidc } from "../identity/Oidc.ts"
import { Sessions } from "../identity/Sessions.ts"
import { SignInThrottle } from "../identity/SignInThrottle.ts"
import { Users } from "../identity/Users.ts"
import { Fetcher } from "../adapters/Fetcher.ts"
import { MonitorAgents } from "../monitors/MonitorAgents.ts"
import { WebPushPublicKey } from "../notifier/WebPushPublicKey.ts"
import { Alerts } from "../orgs/Alerts.ts"
import { ApiKeys } from "../orgs/ApiKeys.ts"
import { Channels } from "../orgs/Channels.ts"
import { Rules } from "../orgs/Rules.ts"
import { CustomSources } from "../orgs/CustomSources.ts"
import { Monitors } from "../orgs/Monitors.ts"
import { LiveTargets } from "../orgs/LiveTargets.ts"
import { Members } from "../orgs/Members.ts"
import { Organizations } from "../orgs/Organizations.ts"
import { StackBoard } from "../orgs/StackBoard.ts"
import { Stacks } from "../orgs/Stacks.ts"
import { TvLinks } from "../orgs/TvLinks.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { compressResponse, makeAssetCache } from "./Compression.ts"
import { frameAncestorsHeader, frameAncestorsOf, makeNonce, portalContentSecurityPolicy } from "./SecurityHeaders.ts"
import { MaintenanceCalendar } from "../orgs/MaintenanceCalendar.ts"
import { MaintenanceWindows } from "../orgs/MaintenanceWindows.ts"
import { nonceHeader, type PortalHandler, type PortalRuntime, type PortalServices } from "./PortalServices.ts"
import { SourceHistories } from "./SourceHistory.ts"
import { StackAnalyticsReader } from "../reports/StackAnalytics.ts"
import { ReportSchedules } from "../reports/ReportSchedules.ts"
import { Sources } from "./Sources.ts"

/** Where `npm run build:portal` writes (portal/build): `client/` for the browser, `server/index.js` for this process. */
export const defaultPortalBuildDir = Path.resolve(import.meta.dirname, "..", "..", "portal", "build")

/** Hashed file names: a file under /assets/ never changes, so browsers keep it for a year. */
const immutable = { "cache-control": "public, max-age=31536000, immutable" }
const assetName = /^[A-Za-z0-9_.-]{1,200}$/

/**
 * portal/public's files at fixed paths: the icon, the PWA's manifest and
 * icons, and the service worker (`no-cache`: a browser checks it at each
 * page load, so an update is taken at once).
 */
const publicFiles: ReadonlyArray<{
  readonly path: `/${string}`
  readonly contentType: string
  readonly cacheControl: string
  /** The service worker's own policy (a worker runs under its script's CSP): it shows notifications with this origin's icons. */
  readonly contentSecurityPolicy?: string
}> = [
  { path: "/favicon.svg", contentType: "image/svg+xml", cacheControl: "public, max-age=86400" },
  { path: "/manifest.webmanifest", contentType: "application/manifest+json", cacheControl: "public, max-age=3600" },
  { path: "/sw.js", contentType: "text/javascript; charset=utf-8", cacheControl: "no-cache", contentSecurityPolicy: "default-src 'self'; frame-ancestors 'none'" },
  ...["icon-192.png", "icon-512.png", "icon-512-maskable.png"].map((name) => ({
    path: `/icons/${name}` as const,
    contentType: "image/png",
    cacheControl: "public, max-age=86400"
  }))
]

const notBuilt = (dir: string) =>
  HttpServerResponse.text(
    `The portal is not built (no ${Path.join(dir, "server", "index.js")}). Run infra/start or npm run build:portal.\n`,
    { status: 503 }
  )

/** Web Responses carry an empty status text; Node would send "HTTP/1.1 419 " (STYLE.md pitfalls). */
const withStatusText = (response: Response): Response =>
  response.statusText !== "" ? response : new Response(response.body, {
    status: response.status,
    statusText: STATUS_CODES[response.status] ?? (response.status === 419 ? "Page Expired" : ""),
    headers: response.headers
  })

/** The built entry, imported again when its file changed (`PORTAL_DEV=true`, for `npm run dev:portal`). */
const loadHandler = (dir: string, reload: boolean) =>
  Effect.gen(function*() {
    const entry = Path.join(dir, "server", "index.js")
    if (!Fs.existsSync(entry)) {
      yield* Effect.logWarning("the portal is not built; pages answer 503 until it is").pipe(Effect.annotateLogs({ entry }))
    }
    let loaded: { readonly version: number; readonly handler: Promise<PortalHandler> } | undefined
    return (): Promise<PortalHandler> | undefined => {
      if (loaded !== undefined && !reload) return loaded.handler
      const version = Fs.statSync(entry, { throwIfNoEntry: false })?.mtimeMs
      if (version === undefined) return undefined
      if (loaded === undefined || (reload && loaded.version !== version)) {
        const url = pathToFileURL(entry).href + (reload ? `?v=${version}` : "")
        loaded = { version, handler: import(url) as Promise<PortalHandler> }
      }
      return loaded.handler
    }
  })

/**
 * The portal on the API's port: `/assets/*` from the client build with
 * immutable caching, `/favicon.ico` to the SVG icon, and every other GET or
 * POST path (not /api/v1, /healthz, /a/…: their routes are more specific) to
 * React Router's handler. Its loaders and actions run effects on this
 * server's context (`PortalRuntime`), so they share its pools and services.
 * HEAD is left to the router, which answers it with the GET route.
 */
export const PortalRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const dir = yield* Config.String("PORTAL_BUILD_DIR").pipe(Config.withDefault(defaultPortalBuildDir))
  const reload = yield* Config.Boolean("PORTAL_DEV").pipe(Config.withDefault(false))
  const portal = yield* loadHandler(dir, reload)
  const context = yield* Effect.context<PortalServices>()
  const runtime: PortalRuntime = {
    run: (effect, options) => Effect.runPromiseExitWith(context)(effect, options)
  }
  const assets = Path.join(dir, "client", "assets")
  const compressedAsset = makeAssetCache()

  yield* router.add("GET", "/assets/*", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const name = decodeURIComponent(request.url.split("?")[0]!.slice("/assets/".length))
    const file = Path.join(assets, name)
    if (!assetName.test(name) || !Fs.existsSync(file)) return HttpServerResponse.text("not found\n", { status: 404 })
    const compressed = compressedAsset(file, request.headers["accept-encoding"] ?? null)
    if (compressed !== undefined) {
      return HttpServerResponse.uint8Array(compressed.body, {
        contentType: compressed.contentType,
        headers: { ...immutable, "content-encoding": compressed.encoding, vary: "Accept-Encoding" }
      })
    }
    return yield* HttpServerResponse.file(file, { headers: immutable }).pipe(Effect.orDie)
  }))
  yield* router.add("GET", "/favicon.ico", HttpServerResponse.redirect("/favicon.svg", { status: 301 }))
  // The files of portal/public outside /assets/: their names are fixed, so browsers revalidate them.
  for (const file of publicFiles) {
    yield* router.add("GET", file.path, Effect.gen(function*() {
      const path = Path.join(dir, "client", file.path)
      if (!Fs.existsSync(path)) return HttpServerResponse.text("not found\n", { status: 404 })
      const headers = {
        "cache-control": file.cacheControl,
        ...(file.contentSecurityPolicy === undefined ? {} : { "content-security-policy": file.contentSecurityPolicy })
      }
      return yield* HttpServerResponse.file(path, { contentType: file.contentType, headers }).pipe(Effect.orDie)
    }))
  }

  const page = Effect.gen(function*() {
    const handler = portal()
    if (handler === undefined) return notBuilt(dir)
    // The client's address for the pages (crowd reports count reporters by it, the audit log records it): the
    // socket's peer or the client a trusted proxy forwarded, replacing any header of that name sent.
    const peer = peerAddress(yield* HttpServerRequest.HttpServerRequest)
    // The page's scripts carry this nonce (portal/app/entry.server.tsx); its CSP allows only them.
    const nonce = makeNonce()
    return yield* HttpEffect.fromWebHandler((received) => {
      const headers = new Headers(received.headers)
      headers.set(peerHeader, peer)
      headers.set(nonceHeader, nonce)
      const request = new Request(received, { headers })
      return handler.then((p) => p.handle(request, runtime)).then((response) => {
        // Where the page may be framed, if its organization allows it (TV link and share pages): the
        // page's own header, never sent on (services/api/SecurityHeaders.ts, `frameAncestorsHeader`).
        const framing = response.headers.get(frameAncestorsHeader)
        if (framing !== null) response.headers.delete(frameAncestorsHeader)
        const frameAncestors = frameAncestorsOf(framing)
        if (response.headers.get("content-type")?.startsWith("text/html") === true) {
          response.headers.set("content-security-policy", portalContentSecurityPolicy(nonce, frameAncestors))
        }
        return compressResponse(request, withStatusText(response))
      })
    })
  })
  yield* router.add("GET", "/*", page)
  yield* router.add("POST", "/*", page)
  // Pages take GET (HEAD) and POST; any other method gets a 405 from a route, with the headers every
  // answer carries (services/api/SecurityHeaders.ts), not the router's bare 404. /api/v1 has its own.
  for (const method of ["PUT", "PATCH", "DELETE", "OPTIONS"] as const) {
    yield* router.add(method, "/*", HttpServerResponse.text("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD, POST" } }))
  }
}))

/**
 * `PortalRoutes` with the services its pages use, over the server's SqlClient.
 * These are the very layer values the API's groups provide (`Sources.layer`,
 * `Stacks.layer`, …; services/api/ApiHttp.ts): the server builds `routes`
 * (services/api/Http.ts) as one layer graph, where a layer is built once and
 * shared by reference, so the pages and the API use the same instances (one
 * `Sources` micro-cache, one `Sessions`). Provide the same values here, never
 * a `Layer.fresh` or a layer made anew by a function call, or the portal gets
 * its own copies (test/browser/shared-services.test.ts catches that).
 */
export const PortalRoutesLive = PortalRoutes.pipe(
  Layer.provide(Layer.mergeAll(ApiKeys.layer, Organizations.layer, Users.layer, Sessions.layer, Sources.layer, SourceHistories.layer, Stacks.layer, StackBoard.layer, StatusHistory.layer, Analytics.layer, StackAnalyticsReader.layer, ReportSchedules.layer, crowdReportsLayer)),
  Layer.provide(Layer.mergeAll(Alerts.layer, Members.layer, Oidc.layer, WebPushPublicKey.layer, SignInThrottle.layer)),
  Layer.provide(TvLinks.layer.pipe(Layer.provideMerge(Stacks.layer), Layer.provide(LiveTargets.layer))),
  Layer.provide(Layer.mergeAll(Organizations.layer, SecretBox.layer)),
  // monitors + custom sources: the same layers as the API's handlers (services/api/Monitors, CustomSources)
  Layer.provide(Layer.mergeAll(Monitors.layer, CustomSources.layer, MaintenanceWindows.layer, MaintenanceCalendar.layer, Channels.layer, Rules.layer)),
  Layer.provide(Layer.mergeAll(SecretBox.layer, MonitorAgents.layer, Fetcher.layer))
  // end monitors + custom sources
)
