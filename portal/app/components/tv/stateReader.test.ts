import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, assert, describe, it } from "vitest"
import { stateReader } from "./stateReader.ts"

/** A local state endpoint: each request is answered by the next behaviour in the list (the last repeats). */
const endpoint = async (behaviours: ReadonlyArray<"reset" | "hang" | "500" | "404" | "ok">) => {
  let served = 0
  const server = Http.createServer((request, response) => {
    const behaviour = behaviours[Math.min(served, behaviours.length - 1)]!
    served++
    if (behaviour === "reset") return request.socket.destroy()
    if (behaviour === "hang") return
    if (behaviour === "500") return response.writeHead(500).end("{}")
    if (behaviour === "404") return response.writeHead(404).end("{}")
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ n: served }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  servers.push(server)
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/state`, served: () => served }
}
const servers: Array<Http.Server> = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

const until = async (check: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe("stateReader", () => {
  it("tries a failed read again (reset, 5xx) until one succeeds", async () => {
    const server = await endpoint(["reset", "500", "ok"])
    const states: Array<{ n: number }> = []
    const reader = stateReader<{ n: number }>({ url: server.url, onState: (s) => states.push(s), onGone: () => assert.fail("not gone"), retryMs: 20 })
    reader.read()
    await until(() => states.length === 1)
    assert.deepStrictEqual(states, [{ n: 3 }])
    reader.stop()
  })

  it("abandons a read that hangs and reads again", async () => {
    const server = await endpoint(["hang", "ok"])
    const states: Array<{ n: number }> = []
    const reader = stateReader<{ n: number }>({ url: server.url, onState: (s) => states.push(s), onGone: () => assert.fail("not gone"), timeoutMs: 100, retryMs: 20 })
    reader.read()
    await until(() => states.length === 1)
    assert.strictEqual(server.served(), 2)
    reader.stop()
  })

  it("runs one read at a time: reads asked for meanwhile make one more read, debounced bursts one", async () => {
    const server = await endpoint(["ok"])
    const states: Array<{ n: number }> = []
    const reader = stateReader<{ n: number }>({ url: server.url, onState: (s) => states.push(s), onGone: () => assert.fail("not gone"), debounceMs: 20 })
    reader.read()
    reader.read()
    reader.read()
    await until(() => states.length === 2)
    for (let i = 0; i < 5; i++) reader.soon()
    await until(() => states.length === 3)
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.strictEqual(server.served(), 3)
    reader.stop()
  })

  it("a 404 (the link was revoked) calls onGone once and stops reading", async () => {
    const server = await endpoint(["404"])
    let gone = 0
    const reader = stateReader({ url: server.url, onState: () => assert.fail("no state"), onGone: () => gone++, retryMs: 20 })
    reader.read()
    await until(() => gone === 1)
    reader.read()
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.strictEqual(gone, 1)
    assert.strictEqual(server.served(), 1)
  })

  it("stop() ends the retries", async () => {
    const server = await endpoint(["500"])
    const reader = stateReader({ url: server.url, onState: () => assert.fail("no state"), onGone: () => assert.fail("not gone"), retryMs: 30 })
    reader.read()
    await until(() => server.served() === 1)
    reader.stop()
    const after = server.served()
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.isAtMost(server.served(), after + 1)
  })
})
