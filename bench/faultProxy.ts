import { Effect } from "effect"
import * as Net from "node:net"

/**
 * A TCP fault proxy for outage tests and `statusgrid bench soak`: listens on
 * 127.0.0.1 (any free port) and forwards every connection to `target`, so a
 * test can take a real server (PostgreSQL, Redis, ClickHouse, the simulator)
 * away from statusgrid without stopping it for everyone else. The tests
 * import it as test/support/faultProxy.ts.
 *
 * ```ts
 * const proxy = await FaultProxy.start({ host: "127.0.0.1", port: 6379 })
 * const url = `redis://127.0.0.1:${proxy.port}/1`   // give statusgrid this address
 * await proxy.cut()      // the server is gone: open connections reset, new ones reset at once
 * proxy.pass()           // back to normal
 * proxy.hold()           // connections stay open but no byte moves (a hung server); pass() releases them
 * proxy.slow(200)        // each chunk delayed by 200 ms, both ways
 * await proxy.close()
 * ```
 *
 * Modes apply at once to open connections. `stats()` counts connections
 * accepted and bytes forwarded, so a test can show that traffic flowed.
 */
export type FaultMode =
  | { readonly _tag: "pass" }
  | { readonly _tag: "hold" }
  | { readonly _tag: "cut" }
  | { readonly _tag: "slow"; readonly delayMs: number }

export interface FaultProxyStats {
  /** connections accepted (including those reset while cut) */
  readonly connections: number
  /** connections reset because the proxy was cut */
  readonly refused: number
  /** bytes forwarded, both directions */
  readonly bytes: number
}

export interface FaultProxy {
  readonly port: number
  /** `host:port` of the proxy. */
  readonly address: string
  readonly mode: () => FaultMode
  /** Forward everything (the initial mode); releases held bytes in order. */
  pass(): void
  /** Keep connections open, forward nothing (held bytes are delivered on `pass`). */
  hold(): void
  /** Destroy every open connection (TCP reset) and reset new ones until `pass`. */
  cut(): Promise<void>
  /** Forward each chunk after `delayMs`. */
  slow(delayMs: number): void
  stats(): FaultProxyStats
  /** Stops listening and destroys every connection. */
  close(): Promise<void>
}

interface Pipe {
  readonly client: Net.Socket
  readonly upstream: Net.Socket
  /** chunks held back while in hold mode, per direction, in order */
  readonly held: Array<{ readonly to: Net.Socket; readonly chunk: Buffer }>
}

/** A TCP reset (RST) where the socket allows it, a plain destroy otherwise. */
const reset = (socket: Net.Socket) => {
  if (socket.destroyed) return
  if (socket.readyState !== "opening") socket.resetAndDestroy()
  else socket.destroy()
}

export const start = (target: { readonly host: string; readonly port: number }): Promise<FaultProxy> =>
  new Promise((resolve, reject) => {
    let mode: FaultMode = { _tag: "pass" }
    const pipes = new Set<Pipe>()
    let connections = 0
    let refused = 0
    let bytes = 0

    const deliver = (to: Net.Socket, chunk: Buffer) => {
      if (to.destroyed) return
      bytes += chunk.length
      to.write(chunk)
    }
    const release = () => {
      for (const pipe of pipes) {
        const held = pipe.held.splice(0)
        for (const { to, chunk } of held) deliver(to, chunk)
      }
    }
    const forward = (pipe: Pipe, to: Net.Socket, chunk: Buffer) => {
      const current = mode
      switch (current._tag) {
        case "pass":
          // Keep order behind anything still held.
          if (pipe.held.length > 0) pipe.held.push({ to, chunk })
          else deliver(to, chunk)
          return
        case "hold":
          pipe.held.push({ to, chunk })
          return
        case "slow":
          setTimeout(() => deliver(to, chunk), current.delayMs)
          return
        case "cut":
          return
      }
    }
    /** Both ends go: reset when cut, a plain close when one end closed. */
    const drop = (pipe: Pipe, hard: boolean) => {
      pipes.delete(pipe)
      for (const socket of [pipe.client, pipe.upstream]) {
        if (hard) reset(socket)
        else socket.destroy()
      }
    }

    const server = Net.createServer((client) => {
      connections += 1
      client.on("error", () => undefined)
      if (mode._tag === "cut") {
        refused += 1
        reset(client)
        return
      }
      client.pause()
      const upstream = Net.connect(target.port, target.host)
      upstream.on("error", () => undefined)
      const pipe: Pipe = { client, upstream, held: [] }
      pipes.add(pipe)
      upstream.once("connect", () => client.resume())
      client.on("data", (chunk: Buffer) => forward(pipe, upstream, chunk))
      upstream.on("data", (chunk: Buffer) => forward(pipe, client, chunk))
      client.once("close", () => drop(pipe, false))
      upstream.once("close", () => drop(pipe, false))
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as Net.AddressInfo
      resolve({
        port: address.port,
        address: `127.0.0.1:${address.port}`,
        mode: () => mode,
        pass: () => {
          mode = { _tag: "pass" }
          release()
        },
        hold: () => {
          mode = { _tag: "hold" }
        },
        cut: async () => {
          mode = { _tag: "cut" }
          for (const pipe of pipes) drop(pipe, true)
          // Let the resets reach both ends before the caller goes on.
          await new Promise((done) => setImmediate(done))
        },
        slow: (delayMs) => {
          release()
          mode = { _tag: "slow", delayMs }
        },
        stats: () => ({ connections, refused, bytes }),
        close: () =>
          new Promise<void>((done) => {
            for (const pipe of pipes) drop(pipe, true)
            server.close(() => done())
          })
      })
    })
  })

/** The port a URL without one means, by scheme. */
const defaultPorts: Readonly<Record<string, number>> = { "postgres:": 5432, "postgresql:": 5432, "redis:": 6379, "http:": 80 }

/** A fault proxy in front of the server a URL names (its host and port), closed when the scope closes. */
export const scopedTo = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const u = new URL(url)
      return start({ host: u.hostname, port: Number(u.port || defaultPorts[u.protocol] || 0) })
    }),
    (proxy) => Effect.promise(() => proxy.close())
  )
