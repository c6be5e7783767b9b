import { Effect, Layer, Queue, Semaphore, Stream } from "effect"
import { Redis } from "ioredis"
import { Bus, BusError, type StreamEntry } from "../Bus.ts"

/**
 * `incr`/`incrMany` in one step (a script runs atomically): each key incremented, and given the
 * lifetime ARGV[1] (ms) when it has none, i.e. when the increment created it; a counter left without
 * one (by an older version's INCR then PEXPIRE, cut between the two) gets it at its next count.
 * No state ever has a counter that never expires.
 */
const countScript = `
local counts = {}
for i, key in ipairs(KEYS) do
  counts[i] = redis.call("INCR", key)
  if redis.call("PTTL", key) < 0 then redis.call("PEXPIRE", key, ARGV[1]) end
end
return counts`

/**
 * One field set on many hashes in one command (KEYS the hashes, ARGV[1] the field, ARGV[i + 1] the
 * value for KEYS[i]): a poller's checks that changed nothing move only `last_checked_at`, hundreds of
 * sources every quarter second, where a pipeline of HSETs costs a command object, a reply and a
 * promise each.
 */
const hsetFieldScript = `
for i, key in ipairs(KEYS) do redis.call("HSET", key, ARGV[1], ARGV[i + 1]) end
return #KEYS`
/** Hashes per script call: a long one would hold Redis (single-threaded) for everyone else. */
const hsetFieldChunk = 1000

/** The field when every entry sets exactly that one field, else undefined. */
const sameSingleField = (entries: ReadonlyArray<readonly [string, Readonly<Record<string, string>>]>): string | undefined => {
  let field: string | undefined
  for (const [, fields] of entries) {
    const names = Object.keys(fields)
    if (names.length !== 1 || (field !== undefined && names[0] !== field)) return undefined
    field = names[0]
  }
  return field
}

const connect = (url: string, name: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = new Redis(url, { lazyConnect: true, connectionName: name, maxRetriesPerRequest: 3, enableAutoPipelining: true })
        // Connection errors reach the commands that fail (and whoever called them logs those); without a
        // listener ioredis prints every reconnection attempt of an outage to the console.
        // The first connection's own error (ECONNREFUSED, ENOTFOUND…) says more than ioredis's "Connection is closed".
        let lastError: unknown
        client.on("error", (error) => {
          lastError = error
        })
        try {
          await client.connect()
        } catch (error) {
          client.disconnect()
          throw lastError ?? error
        }
        return client
      },
      catch: (cause) => new BusError({ operation: "connect", cause })
    }),
    // QUIT needs the server: while Redis is away, just drop the connection.
    (client) =>
      client.status === "ready"
        ? Effect.tryPromise(() => client.quit()).pipe(Effect.catch(() => Effect.sync(() => client.disconnect())))
        : Effect.sync(() => client.disconnect())
  )

const call = <A>(operation: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => new BusError({ operation, cause }) })

/** XREADGROUP's reply: [[stream, [[id, [k, v, k, v, ...]], ...]]] or null. */
type XReadReply = Array<[string, Array<[string, Array<string> | null]>]> | null

const toEntries = (reply: XReadReply): Array<StreamEntry> =>
  (reply?.[0]?.[1] ?? []).map(([id, flat]) => {
    const fields: Record<string, string> = {}
    const list = flat ?? []
    for (let i = 0; i + 1 < list.length; i += 2) fields[list[i]!] = list[i + 1]!
    return { id, fields }
  })

/** The bus on a Redis server (`REDIS_URL`), through ioredis. */
export const layer = (url: string) =>
  Layer.effect(
    Bus,
    Effect.gen(function*() {
      const client = yield* connect(url, "statusgrid")
      // XREADGROUP BLOCK holds its connection, so blocking reads get their own, one at a time.
      const blocking = yield* connect(url, "statusgrid-blocking")
      const blockingLock = yield* Semaphore.make(1)
      const target = (() => {
        const u = new URL(url)
        return `${u.hostname}:${u.port || "6379"}${u.pathname === "/" ? "" : u.pathname}`
      })()

      return Bus.of({
        kind: "redis",
        target,
        hset: (key, fields) => call("hset", () => client.hset(key, fields)).pipe(Effect.asVoid),
        hsetMany: (entries) => {
          if (entries.length === 0) return Effect.void
          const field = entries.length > 1 ? sameSingleField(entries) : undefined
          if (field !== undefined) {
            return call("hset (script)", async () => {
              for (let from = 0; from < entries.length; from += hsetFieldChunk) {
                const chunk = entries.slice(from, from + hsetFieldChunk)
                await client.eval(hsetFieldScript, chunk.length, ...chunk.map(([key]) => key), field, ...chunk.map(([, fields]) => fields[field]!))
              }
            })
          }
          return call("hset (pipeline)", async () => {
            const pipeline = client.pipeline()
            for (const [key, fields] of entries) pipeline.hset(key, fields)
            const replies = (await pipeline.exec()) ?? []
            const failed = replies.find(([error]) => error !== null)
            if (failed !== undefined) throw failed[0]
          })
        },
        hgetall: (key) => call("hgetall", () => client.hgetall(key)),
        hdel: (key, fields) =>
          fields.length === 0 ? Effect.void : call("hdel", () => client.hdel(key, ...fields)).pipe(Effect.asVoid),
        del: (keys) => keys.length === 0 ? Effect.void : call("del", () => client.del(...keys)).pipe(Effect.asVoid),
        publish: (channel, message) => call("publish", () => client.publish(channel, message)),
        subscribe: Effect.fnUntraced(function*(channel: string) {
          const subscriber = yield* connect(url, "statusgrid-subscriber")
          const queue = yield* Queue.unbounded<string>()
          subscriber.on("message", (ch: string, message: string) => {
            if (ch === channel) Queue.offerUnsafe(queue, message)
          })
          yield* call("subscribe", () => subscriber.subscribe(channel))
          return Stream.fromQueue(queue)
        }),
        xadd: (stream, fields, maxLen) => {
          const flat = Object.entries(fields).flat()
          return call("xadd", () =>
            maxLen === undefined
              ? client.xadd(stream, "*", ...flat)
              : client.xadd(stream, "MAXLEN", "~", String(maxLen), "*", ...flat)).pipe(
              Effect.map((id) => id ?? "")
            )
        },
        xgroupCreate: (stream, group, from) =>
          call("xgroup create", () => client.xgroup("CREATE", stream, group, from, "MKSTREAM")).pipe(
            Effect.asVoid,
            Effect.catch((error) =>
              String(error.cause).includes("BUSYGROUP") ? Effect.void : Effect.fail(error)
            )
          ),
        xreadgroup: (stream, group, consumer, options) => {
          const read = (conn: Redis, block: boolean) =>
            call("xreadgroup", () =>
              (block
                ? conn.xreadgroup(
                  "GROUP", group, consumer, "COUNT", options.count, "BLOCK", options.blockMs,
                  "STREAMS", stream, options.pending ? "0" : ">"
                )
                : conn.xreadgroup(
                  "GROUP", group, consumer, "COUNT", options.count,
                  "STREAMS", stream, options.pending ? "0" : ">"
                )) as Promise<XReadReply>).pipe(Effect.map(toEntries))
          return options.pending || options.blockMs <= 0
            ? read(client, false)
            : blockingLock.withPermits(1)(read(blocking, true))
        },
        xautoclaim: (stream, group, consumer, minIdleMs, count) =>
          call("xautoclaim", () =>
            client.call("XAUTOCLAIM", stream, group, consumer, String(minIdleMs), "0-0", "COUNT", String(count)) as Promise<
              [string, Array<[string, Array<string> | null]>, ...Array<unknown>]
            >).pipe(Effect.map((reply) => toEntries([[stream, reply[1]]]))),
        xack: (stream, group, ids) =>
          ids.length === 0 ? Effect.succeed(0) : call("xack", () => client.xack(stream, group, ...ids)),
        xlen: (stream) => call("xlen", () => client.xlen(stream)),
        incr: (key, ttlMs) =>
          call("incr", async () => Number((await client.eval(countScript, 1, key, ttlMs) as Array<number>)[0])),
        incrMany: (keys, ttlMs) =>
          keys.length === 0
            ? Effect.succeed([])
            : call("incr (script)", async () => (await client.eval(countScript, keys.length, ...keys, ttlMs) as Array<number>).map(Number)),
        ping: call("ping", () => client.ping()).pipe(Effect.asVoid)
      })
    })
  )
