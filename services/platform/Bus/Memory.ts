import { Clock, Effect, Layer, PubSub, Stream } from "effect"
import { Bus, type ReadGroupOptions, type StreamEntry } from "../Bus.ts"

interface Group {
  lastDelivered: string
  /** id -> consumer and delivery time, in delivery order */
  readonly pending: Map<string, { readonly consumer: string; readonly at: number }>
}

interface EventStream {
  readonly entries: Array<StreamEntry>
  readonly groups: Map<string, Group>
  lastMs: number
  lastSeq: number
  readonly waiters: Set<() => void>
}

/** Redis stream ids compare by (ms, seq). */
export const compareIds = (a: string, b: string): number => {
  const [am = 0, as = 0] = a.split("-").map(Number)
  const [bm = 0, bs = 0] = b.split("-").map(Number)
  return am === bm ? as - bs : am - bm
}

/**
 * The bus in process memory, for the single-process embedded default. Same
 * semantics as Redis for the operations statusgrid uses; nothing survives a
 * restart, which is acceptable because the current state is rebuilt by the
 * pollers and PostgreSQL holds what must persist.
 */
export const layer = Layer.sync(
  Bus,
  () => {
    const hashes = new Map<string, Map<string, string>>()
    const counters = new Map<string, { value: number; until: number }>()
    const channels = new Map<string, PubSub.PubSub<string>>()
    const subscribers = new Map<string, number>()
    const streams = new Map<string, EventStream>()

    const channel = Effect.fnUntraced(function*(name: string) {
      const existing = channels.get(name)
      if (existing) return existing
      const created = yield* PubSub.unbounded<string>()
      channels.set(name, created)
      return created
    })

    const stream = (name: string): EventStream => {
      let s = streams.get(name)
      if (!s) {
        s = { entries: [], groups: new Map(), lastMs: 0, lastSeq: 0, waiters: new Set() }
        streams.set(name, s)
      }
      return s
    }

    const deliver = (s: EventStream, group: Group, consumer: string, count: number, now: number): Array<StreamEntry> => {
      const out: Array<StreamEntry> = []
      for (const entry of s.entries) {
        if (out.length >= count) break
        if (compareIds(entry.id, group.lastDelivered) <= 0) continue
        out.push(entry)
        group.pending.set(entry.id, { consumer, at: now })
        group.lastDelivered = entry.id
      }
      return out
    }

    /** Until an entry is added or `ms` pass on the Effect clock. */
    const waitForEntry = (s: EventStream, ms: number) =>
      Effect.callback<void>((resume) => {
        const wake = () => resume(Effect.void)
        s.waiters.add(wake)
        return Effect.sync(() => s.waiters.delete(wake))
      }).pipe(Effect.timeoutOption(ms), Effect.asVoid)

    const incrAt = (key: string, ttlMs: number, now: number) => {
      const current = counters.get(key)
      const live = current !== undefined && current.until > now ? current : { value: 0, until: now + ttlMs }
      live.value += 1
      counters.set(key, live)
      // Expired counters go when the map grows; the counters of one window are few.
      if (counters.size > 10_000) for (const [k, c] of counters) if (c.until <= now) counters.delete(k)
      return live.value
    }

    return Bus.of({
      kind: "memory",
      target: "in-process",
      hset: (key, fields) =>
        Effect.sync(() => {
          let h = hashes.get(key)
          if (!h) hashes.set(key, (h = new Map()))
          for (const [k, v] of Object.entries(fields)) h.set(k, v)
        }),
      hsetMany: (entries) =>
        Effect.sync(() => {
          for (const [key, fields] of entries) {
            let h = hashes.get(key)
            if (!h) hashes.set(key, (h = new Map()))
            for (const [k, v] of Object.entries(fields)) h.set(k, v)
          }
        }),
      hgetall: (key) => Effect.sync(() => Object.fromEntries(hashes.get(key) ?? [])),
      hdel: (key, fields) =>
        Effect.sync(() => {
          const h = hashes.get(key)
          if (!h) return
          for (const f of fields) h.delete(f)
          if (h.size === 0) hashes.delete(key)
        }),
      del: (keys) =>
        Effect.sync(() => {
          for (const k of keys) {
            hashes.delete(k)
            streams.delete(k)
          }
        }),
      publish: Effect.fnUntraced(function*(name: string, message: string) {
        const receivers = subscribers.get(name) ?? 0
        if (receivers > 0) yield* PubSub.publish(yield* channel(name), message)
        return receivers
      }),
      subscribe: Effect.fnUntraced(function*(name: string) {
        const subscription = yield* PubSub.subscribe(yield* channel(name))
        yield* Effect.acquireRelease(
          Effect.sync(() => subscribers.set(name, (subscribers.get(name) ?? 0) + 1)),
          () => Effect.sync(() => subscribers.set(name, (subscribers.get(name) ?? 1) - 1))
        )
        return Stream.fromSubscription(subscription)
      }),
      xadd: Effect.fnUntraced(function*(name: string, fields: Readonly<Record<string, string>>, maxLen?: number) {
        const s = stream(name)
        const now = yield* Clock.currentTimeMillis
        if (now > s.lastMs) {
          s.lastMs = now
          s.lastSeq = 0
        } else {
          s.lastSeq++
        }
        const id = `${s.lastMs}-${s.lastSeq}`
        s.entries.push({ id, fields: { ...fields } })
        if (maxLen !== undefined && s.entries.length > maxLen) s.entries.splice(0, s.entries.length - maxLen)
        for (const wake of s.waiters) wake()
        return id
      }),
      xgroupCreate: (name, groupName, from) =>
        Effect.sync(() => {
          const s = stream(name)
          if (s.groups.has(groupName)) return
          const last = s.entries.at(-1)
          s.groups.set(groupName, { lastDelivered: from === "$" && last ? last.id : "0-0", pending: new Map() })
        }),
      xreadgroup: Effect.fnUntraced(function*(name: string, groupName: string, consumer: string, options: ReadGroupOptions) {
        const s = stream(name)
        const group = s.groups.get(groupName)
        if (!group) {
          return yield* Effect.die(new Error(`NOGROUP No such key '${name}' or consumer group '${groupName}'`))
        }
        if (options.pending) {
          const byId = new Map(s.entries.map((e) => [e.id, e]))
          const out: Array<StreamEntry> = []
          for (const [id, owner] of group.pending) {
            if (out.length >= options.count) break
            if (owner.consumer !== consumer) continue
            out.push(byId.get(id) ?? { id, fields: {} })
          }
          return out
        }
        const ready = deliver(s, group, consumer, options.count, yield* Clock.currentTimeMillis)
        if (ready.length > 0 || options.blockMs <= 0) return ready
        yield* waitForEntry(s, options.blockMs)
        return deliver(s, group, consumer, options.count, yield* Clock.currentTimeMillis)
      }),
      xautoclaim: Effect.fnUntraced(function*(name: string, groupName: string, consumer: string, minIdleMs: number, count: number) {
        const s = stream(name)
        const group = s.groups.get(groupName)
        if (!group) {
          return yield* Effect.die(new Error(`NOGROUP No such key '${name}' or consumer group '${groupName}'`))
        }
        const byId = new Map(s.entries.map((e) => [e.id, e]))
        const now = yield* Clock.currentTimeMillis
        const out: Array<StreamEntry> = []
        for (const [id, owner] of group.pending) {
          if (out.length >= count) break
          if (now - owner.at < minIdleMs) continue
          const entry = byId.get(id)
          // Like Redis: an entry trimmed from the stream is dropped from the pending list, not returned.
          if (entry === undefined) {
            group.pending.delete(id)
            continue
          }
          group.pending.set(id, { consumer, at: now })
          out.push(entry)
        }
        return out
      }),
      xack: (name, groupName, ids) =>
        Effect.sync(() => {
          const group = streams.get(name)?.groups.get(groupName)
          if (!group) return 0
          let n = 0
          for (const id of ids) if (group.pending.delete(id)) n++
          return n
        }),
      xlen: (name) => Effect.sync(() => streams.get(name)?.entries.length ?? 0),
      incr: (key: string, ttlMs: number) => Effect.map(Clock.currentTimeMillis, (now) => incrAt(key, ttlMs, now)),
      incrMany: (keys, ttlMs) => Effect.map(Clock.currentTimeMillis, (now) => keys.map((key) => incrAt(key, ttlMs, now))),
      ping: Effect.void
    })
  }
)
