import { describe, expect, it } from "vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { compressResponse, makeAssetCache, negotiate } from "./Compression.ts"

const html = "<!doctype html><p>" + "status ".repeat(400) + "</p>"
const request = (acceptEncoding?: string, method = "GET") =>
  new Request("http://127.0.0.1/x", { method, headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } })

describe("negotiate", () => {
  it("takes the first offered encoding the client accepts, honouring q=0 and *", () => {
    expect(negotiate("gzip, deflate, br", ["br", "gzip"])).toBe("br")
    expect(negotiate("gzip;q=1, br;q=0", ["br", "gzip"])).toBe("gzip")
    expect(negotiate("identity", ["br", "gzip"])).toBeUndefined()
    expect(negotiate("*", ["gzip"])).toBe("gzip")
    expect(negotiate(null, ["gzip"])).toBeUndefined()
  })
})

describe("compressResponse", () => {
  it("gzips a page for a client that accepts it, and the bytes decompress to the page", async () => {
    const out = compressResponse(request("gzip, br"), new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }))
    expect(out.headers.get("content-encoding")).toBe("gzip")
    expect(out.headers.get("vary")).toContain("Accept-Encoding")
    const bytes = Buffer.from(await out.arrayBuffer())
    expect(bytes.length).toBeLessThan(Buffer.byteLength(html) / 4)
    expect(Zlib.gunzipSync(bytes).toString()).toBe(html)
  })

  it("flushes each chunk: the first part of a streamed page can be read before the stream ends", async () => {
    let push!: (chunk: string) => void
    let end!: () => void
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (chunk) => controller.enqueue(new TextEncoder().encode(chunk))
        end = () => controller.close()
      }
    })
    const out = compressResponse(request("gzip"), new Response(body, { headers: { "content-type": "text/html" } }))
    const reader = out.body!.getReader()
    // What the client can inflate from the bytes received so far (a truncated gzip stream, read to its last flush).
    const received: Array<Uint8Array> = []
    const inflated = () => Zlib.gunzipSync(Buffer.concat(received), { finishFlush: Zlib.constants.Z_SYNC_FLUSH }).toString()
    push("<html><body>the shell")
    // The shell arrives and inflates while the deferred part is still pending.
    while (!inflated().includes("the shell")) received.push((await reader.read()).value!)
    expect(inflated()).toBe("<html><body>the shell")
    push("<div>the deferred part</div></body></html>")
    end()
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      received.push(value)
    }
    expect(Zlib.gunzipSync(Buffer.concat(received)).toString()).toBe("<html><body>the shell<div>the deferred part</div></body></html>")
  })

  it("leaves alone event streams, small or already encoded bodies, HEAD, and clients without gzip", () => {
    const cases: Array<[Request, Response]> = [
      [request("gzip"), new Response("data: x\n\n", { headers: { "content-type": "text/event-stream" } })],
      [request("gzip"), new Response("tiny", { headers: { "content-type": "text/html", "content-length": "4" } })],
      [request("gzip"), new Response(html, { headers: { "content-type": "text/html", "content-encoding": "br" } })],
      [request("gzip", "HEAD"), new Response(null, { headers: { "content-type": "text/html" } })],
      [request(), new Response(html, { headers: { "content-type": "text/html" } })],
      [request("gzip"), new Response(html, { headers: { "content-type": "image/png" } })]
    ]
    for (const [req, res] of cases) expect(compressResponse(req, res)).toBe(res)
  })
})

describe("makeAssetCache", () => {
  it("compresses a text asset once with Brotli or gzip as accepted, and leaves other files", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "assets-"))
    const js = Path.join(dir, "entry-abc.js")
    Fs.writeFileSync(js, "export const x = 1;\n".repeat(200))
    Fs.writeFileSync(Path.join(dir, "font.woff2"), "binary")
    const cache = makeAssetCache()
    const br = cache(js, "gzip, br")!
    expect(br.encoding).toBe("br")
    expect(br.contentType).toMatch(/javascript/)
    expect(Zlib.brotliDecompressSync(br.body).toString()).toBe(Fs.readFileSync(js, "utf8"))
    const gz = cache(js, "gzip")!
    expect(Zlib.gunzipSync(gz.body).toString()).toBe(Fs.readFileSync(js, "utf8"))
    // Kept: the file changing on disk (it never does; names are hashed) does not change the answer.
    Fs.writeFileSync(js, "changed")
    expect(cache(js, "br")!.body).toBe(br.body)
    expect(cache(Path.join(dir, "font.woff2"), "br")).toBeUndefined()
    expect(cache(js, "identity")).toBeUndefined()
    Fs.rmSync(dir, { recursive: true })
  })
})
