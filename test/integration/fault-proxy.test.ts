import { Redis } from "ioredis"
import * as Net from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as FaultProxy from "../support/faultProxy.ts"
import { testRedisUrl } from "../support/stores.ts"

/** An echo server: every byte comes back. */
const echoServer = () =>
  new Promise<Net.Server>((resolve) => {
    const server = Net.createServer((socket) => {
      socket.on("error", () => undefined)
      socket.pipe(socket)
    })
    server.listen(0, "127.0.0.1", () => resolve(server))
  })

const connect = (port: number) =>
  new Promise<Net.Socket>((resolve, reject) => {
    const socket = Net.connect(port, "127.0.0.1", () => resolve(socket))
    socket.once("error", reject)
  })

/** The next chunk the socket receives, or "timeout" after `ms`, or "closed". */
const nextChunk = (socket: Net.Socket, ms: number) =>
  new Promise<string>((resolve) => {
    const timer = setTimeout(() => done("timeout"), ms)
    const onData = (chunk: Buffer) => done(chunk.toString())
    const onClose = () => done("closed")
    const done = (what: string) => {
      clearTimeout(timer)
      socket.off("data", onData)
      socket.off("close", onClose)
      resolve(what)
    }
    socket.on("data", onData)
    socket.once("close", onClose)
  })

describe("fault proxy", () => {
  let echo: Net.Server
  let proxy: FaultProxy.FaultProxy
  beforeAll(async () => {
    echo = await echoServer()
    proxy = await FaultProxy.start({ host: "127.0.0.1", port: (echo.address() as Net.AddressInfo).port })
  })
  afterAll(async () => {
    await proxy.close()
    await new Promise((done) => echo.close(done))
  })

  it("passes, holds, slows and cuts a TCP connection", async () => {
    const socket = await connect(proxy.port)
    socket.on("error", () => undefined)
    socket.write("one")
    assert.strictEqual(await nextChunk(socket, 2_000), "one")

    proxy.hold()
    socket.write("two")
    assert.strictEqual(await nextChunk(socket, 300), "timeout", "held bytes must not arrive")
    const released = nextChunk(socket, 2_000)
    proxy.pass()
    assert.strictEqual(await released, "two")

    proxy.slow(300)
    const sent = Date.now()
    socket.write("three")
    assert.strictEqual(await nextChunk(socket, 3_000), "three")
    assert.isAtLeast(Date.now() - sent, 500, "both directions are delayed")
    proxy.pass()

    const closed = nextChunk(socket, 2_000)
    await proxy.cut()
    assert.strictEqual(await closed, "closed")
    const refused = await connect(proxy.port).then(
      (s) => nextChunk(s, 2_000),
      () => "closed"
    )
    assert.strictEqual(refused, "closed", "new connections are reset while cut")
    assert.isAtLeast(proxy.stats().refused, 1)

    proxy.pass()
    const again = await connect(proxy.port)
    again.write("four")
    assert.strictEqual(await nextChunk(again, 2_000), "four")
    again.destroy()
  })

  it("takes a real Redis away and gives it back", async () => {
    const target = new URL(testRedisUrl)
    const redisProxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 6379) })
    const via = new URL(testRedisUrl)
    via.port = String(redisProxy.port)
    const client = new Redis(via.toString(), { maxRetriesPerRequest: 1, retryStrategy: () => 100 })
    client.on("error", () => undefined)
    try {
      assert.strictEqual(await client.ping(), "PONG")
      await redisProxy.cut()
      const failed = await client.ping().then(() => "answered", () => "failed")
      assert.strictEqual(failed, "failed")
      redisProxy.pass()
      let answer = ""
      for (let i = 0; i < 50 && answer !== "PONG"; i++) {
        answer = await client.ping().catch(() => "")
        if (answer !== "PONG") await new Promise((done) => setTimeout(done, 100))
      }
      assert.strictEqual(answer, "PONG")
    } finally {
      client.disconnect()
      await redisProxy.close()
    }
  })
})
