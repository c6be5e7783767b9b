import { createReadableStreamFromReadable } from "@react-router/node"
import { isbot } from "isbot"
import { PassThrough } from "node:stream"
import type { RenderToPipeableStreamOptions } from "react-dom/server"
import { renderToPipeableStream } from "react-dom/server"
import { type EntryContext, ServerRouter } from "react-router"
import { nonceHeader } from "#services/api/PortalServices.ts"
import { NonceContext } from "./lib/nonce.ts"

/** How long a streamed page waits for its deferred data before the rest is sent as errors. */
export const streamTimeout = 5_000

/**
 * React Router's Node rendering, with the page's CSP nonce: the server sets it on the request
 * (`nonceHeader`, services/api/Portal.ts) and sends the matching policy; every script React Router
 * and React write (hydration data, the module loader, streamed chunks) carries it.
 */
export default function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  routerContext: EntryContext
) {
  if (request.method.toUpperCase() === "HEAD") return new Response(null, { status: responseStatusCode, headers: responseHeaders })
  const nonce = request.headers.get(nonceHeader) ?? undefined
  const userAgent = request.headers.get("user-agent")
  // Crawlers get the whole page at once.
  const ready: keyof RenderToPipeableStreamOptions = (userAgent !== null && isbot(userAgent)) || routerContext.isSpaMode ? "onAllReady" : "onShellReady"

  return new Promise<Response>((resolve, reject) => {
    let shellRendered = false
    let status = responseStatusCode
    let timeout: ReturnType<typeof setTimeout> | undefined
    const { pipe, abort } = renderToPipeableStream(
      <NonceContext.Provider value={nonce}>
        <ServerRouter context={routerContext} url={request.url} {...(nonce === undefined ? {} : { nonce })} />
      </NonceContext.Provider>,
      {
        ...(nonce === undefined ? {} : { nonce }),
        [ready]() {
          shellRendered = true
          const body = new PassThrough({
            final(callback) {
              clearTimeout(timeout)
              timeout = undefined
              callback()
            }
          })
          responseHeaders.set("Content-Type", "text/html")
          pipe(body)
          resolve(new Response(createReadableStreamFromReadable(body), { headers: responseHeaders, status }))
        },
        onShellError: reject,
        onError(error: unknown) {
          status = 500
          // Errors before the shell reject (React Router logs them); later ones are logged here.
          if (shellRendered) console.error(error)
        }
      }
    )
    timeout = setTimeout(abort, streamTimeout + 1000)
  })
}
