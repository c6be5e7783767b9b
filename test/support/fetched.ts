import * as Fs from "node:fs"
import * as Path from "node:path"
import type { Fetched } from "../../services/adapters/Adapter.ts"
import type { Renderer, SimSource } from "../../services/simulator/Model.ts"
import { joinUrl } from "../../services/adapters/text.ts"

const fixturesDir = Path.resolve(import.meta.dirname, "..", "fixtures")

/** A fetched document from a string or bytes. */
export const fetched = (
  url: string,
  body: string | Uint8Array,
  options: { readonly status?: number; readonly contentType?: string } = {}
): Fetched => ({
  url,
  status: options.status ?? 200,
  contentType: options.contentType ?? "application/json",
  body: typeof body === "string" ? new TextEncoder().encode(body) : body
})

/** The bytes of test/fixtures/<provider>/<file>. */
export const fixtureBytes = (provider: string, file: string): Uint8Array =>
  new Uint8Array(Fs.readFileSync(Path.join(fixturesDir, provider, file)))

/** A fixture as a fetched document. */
export const fixture = (
  provider: string,
  file: string,
  url: string,
  options: { readonly status?: number; readonly contentType?: string } = {}
): Fetched => fetched(url, fixtureBytes(provider, file), options)

/**
 * What the simulator would answer for `url` of `source` (no server): the
 * renderer's route for the path below the source's base URL, else its page
 * when it is a catch-all, else a 404.
 */
export const simulated = (renderer: Renderer, source: SimSource, url: string, now: Date): Fetched => {
  const base = new URL(source.baseUrl).pathname.replace(/\/+$/, "")
  const path = new URL(url).pathname.slice(base.length) || "/"
  const route = renderer.routes[path]
  if (route) {
    const r = route(source, now)
    return fetched(url, r.body, { contentType: r.contentType })
  }
  if (path === "/" || renderer.catchAllHtml) return fetched(url, renderer.page(source, now), { contentType: "text/html" })
  return fetched(url, "Not Found", { status: 404, contentType: "text/plain" })
}

/** Everything an adapter would fetch for `source`, answered by the renderer. */
export const simulatedAll = (urls: ReadonlyArray<string>, renderer: Renderer, source: SimSource, now: Date) =>
  urls.map((url) => simulated(renderer, source, url, now))

export { joinUrl }
