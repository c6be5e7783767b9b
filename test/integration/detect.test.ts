import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { detect, feedLinks } from "../../services/adapters/detect.ts"
import { Fetcher } from "../../services/adapters/Fetcher.ts"
import * as Probe from "../../services/adapters/Probe.ts"
import type { Adapter } from "../../services/adapters/Adapter.ts"
import { adapterFor, adapters, providerIds } from "../../services/adapters/registry.ts"
import * as Simulator from "../../services/simulator/Server.ts"

class Sim extends Context.Service<Sim, Simulator.Simulator>()("test/detect/Sim") {}
const simLayer = Layer.effect(Sim, Simulator.make({ port: 0, host: "127.0.0.1", sources: 0 }))

const samples = Path.resolve(import.meta.dirname, "..", "..", "..", "shared", "providers")
const fixtures = Path.resolve(import.meta.dirname, "..", "fixtures")
/** The shared samples when they sit beside the repository (as in CI), else the copies in test/fixtures. */
const sample = (file: string, fixtureDir: string) => {
  const shared = Path.join(samples, file)
  return Fs.existsSync(shared) ? Fs.readFileSync(shared) : Fs.readFileSync(Path.join(fixtures, fixtureDir, file))
}

interface Site {
  /** path below the site's root -> [content type, body] */
  readonly files: Record<string, readonly [string, Buffer | string]>
  /** answer every other path with this HTML page (SPA hosts) */
  readonly catchAll?: string
}

const spa = "<!DOCTYPE html><html><head><title>Status</title></head><body><div id=app></div></body></html>"
const json = "application/json; charset=utf-8"
const rssType = "application/rss+xml"

/** Each shared sample as a real site would serve it, and the provider it must be detected as. */
const sites: Record<string, { readonly site: Site; readonly expected: string }> = {
  github: { expected: "github", site: { files: { "/api/v2/summary.json": [json, sample("statuspage-summary.json", "statuspage")] } } },
  incidentio: {
    expected: "incident_io",
    site: { files: { "/api/v2/summary.json": [json, sample("incidentio-compat-summary.json", "incidentio")] } }
  },
  instatus: {
    expected: "instatus",
    site: {
      files: {
        "/summary.json": [json, sample("instatus-summary.json", "instatus")],
        "/v2/components.json": [json, sample("instatus-v2-components.json", "instatus")]
      }
    }
  },
  betterstack: {
    expected: "betterstack",
    site: { files: { "/index.json": [json, sample("betterstack-index.json", "betterstack")] }, catchAll: spa }
  },
  cachet2: { expected: "cachet_v2", site: { files: { "/api/v1/components": [json, sample("cachet-v2-components.json", "cachet")] } } },
  cachet3: { expected: "cachet_v3", site: { files: { "/api/components": [json, sample("cachet-v3-components.json", "cachet")] } } },
  gcp: { expected: "gcp", site: { files: { "/incidents.json": [json, sample("gcp-incidents.json", "gcp")] } } },
  aws: { expected: "aws", site: { files: { "/rss/all.rss": [rssType, sample("aws-health-all.rss", "aws")] } } },
  azure: { expected: "azure", site: { files: { "/en-us/status/feed/": [rssType, sample("azure-status-feed.xml", "azure")] } } },
  slack: { expected: "slack", site: { files: { "/api/v2.0.0/current": [json, sample("slack-current.json", "slack")] } } },
  feed: {
    expected: "rss",
    site: {
      files: {
        "/": ["text/html", `<!DOCTYPE html><html><head><link rel="alternate" type="application/rss+xml" href="/feed/feed.rss"></head></html>`],
        "/feed.rss": [rssType, sample("betterstack-feed.rss", "betterstack")]
      }
    }
  },
  health: { expected: "health_check", site: { files: { "/": [json, "{\"status\":\"pass\"}"] } } }
}

class Sites extends Context.Service<Sites, { readonly url: string }>()("test/detect/Sites") {}

/** A plain local HTTP server serving every sample site under /<name>/. */
const sitesLayer = Layer.effect(
  Sites,
  Effect.acquireRelease(
    Effect.callback<Http.Server>((resume) => {
      const server = Http.createServer((req, res) => {
        const [, name, ...rest] = new URL(req.url ?? "/", "http://x").pathname.split("/")
        const site = sites[name ?? ""]?.site
        const path = "/" + rest.join("/")
        const file = site?.files[path]
        if (file) {
          res.writeHead(200, { "content-type": file[0] })
          return res.end(file[1])
        }
        if (site?.catchAll !== undefined) {
          res.writeHead(200, { "content-type": "text/html" })
          return res.end(site.catchAll)
        }
        res.writeHead(404, { "content-type": "text/plain" })
        res.end("not found")
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  ).pipe(Effect.map((server) => ({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })))
)

describe("provider detection", () => {
  layer(Layer.mergeAll(simLayer, sitesLayer, Fetcher.layerOperator), { timeout: 60_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("recognises every provider the simulator serves, and reads it", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const found: Record<string, string> = {}
        for (const provider of providerIds) {
          const source = sim.state.add({ key: `det-${provider.replace(/_/g, "-")}`, name: `Detect ${provider}`, provider })
          const detected = yield* detect(source.baseUrl)
          found[provider] = detected.provider
          const snapshot = yield* Probe.read(adapterFor(detected.provider)!, { url: detected.url }, new Date())
          assert.strictEqual(snapshot.provider, provider)
          assert.strictEqual(snapshot.status, "operational")
        }
        assert.deepStrictEqual(found, Object.fromEntries(providerIds.map((p) => [p, p])))
      }))

    it.effect("recognises each shared sample served from a plain HTTP server", () =>
      Effect.gen(function*() {
        const { url } = yield* Sites
        const found: Record<string, string> = {}
        for (const name of Object.keys(sites)) found[name] = (yield* detect(`${url}/${name}`)).provider
        assert.deepStrictEqual(found, Object.fromEntries(Object.entries(sites).map(([name, s]) => [name, s.expected])))
      }))

    it.effect("knows providers by their hosts without fetching anything", () =>
      Effect.gen(function*() {
        const byHost = {
          "https://www.githubstatus.com": "github",
          "https://acme.statuspage.io": "statuspage_io",
          "https://acme.instatus.com": "instatus",
          "https://status.cloud.google.com": "gcp",
          "https://status.aws.amazon.com": "aws",
          "https://azure.status.microsoft/en-us/status": "azure",
          "https://slack-status.com": "slack"
        }
        const found: Record<string, string> = {}
        for (const url of Object.keys(byHost)) {
          const detected = yield* detect(url)
          assert.strictEqual(detected.by, "host")
          found[url] = detected.provider
        }
        assert.deepStrictEqual(found, byHost)
        // A host merely containing a provider's name is not that provider (no network needed to tell).
        for (const lookalike of ["https://githubstatus.com.evil.example", "https://notstatus.aws.amazon.com.example", "https://evilinstatus.com"]) {
          assert.isFalse(adapters.some((a: Adapter) => a.detect.host?.(new URL(lookalike)) ?? false), lookalike)
        }
        const invalid = yield* Effect.flip(detect("notavalidurl"))
        assert.match(invalid.message, /not a valid URL/)
      }))
  })

  describe("feedLinks", () => {
    it("finds alternate feed links and resolves them against the page", () => {
      const html = `<head><link rel="stylesheet" href="/a.css"><link rel="alternate" type="application/atom+xml" href="/history.atom">` +
        `<link type="application/rss+xml" rel="alternate" href="https://cdn.example/feed.rss?a=1&amp;b=2"></head>`
      assert.deepStrictEqual(feedLinks(html, "https://status.example.com/page"), [
        "https://status.example.com/history.atom",
        "https://cdn.example/feed.rss?a=1&b=2"
      ])
    })
  })
})
