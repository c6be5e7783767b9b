import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { withConfig } from "../../test/support/stores.ts"
import type { Delta } from "../domain/Event.ts"
import { Bus } from "./Bus.ts"
import * as MemoryBus from "./Bus/Memory.ts"
import { emptyFilter, type LiveFilter, LiveHub, matches } from "./LiveHub.ts"
import { RedisKeys } from "./RedisKeys.ts"

const source = (key: string, components: Array<string> = [], incidents?: boolean): Delta => ({
  kind: "source",
  key,
  status: "degraded",
  previous_status: "operational",
  components: components.map((id) => ({ id, status: "degraded" })),
  events: [],
  ...(incidents === undefined ? {} : { incidents }),
  at: "2026-01-01T00:00:00.000Z"
})
const monitor = (id: string, organization_id: string): Delta => ({
  kind: "monitor",
  id,
  organization_id,
  state: "down",
  previous_state: "up",
  events: [],
  at: "2026-01-01T00:00:00.000Z"
})

describe("live filter", () => {
  const filter: LiveFilter = {
    sources: new Set(["aws"]),
    components: new Map([["stripe", new Set(["api"])]]),
    monitors: new Set(["m1"])
  }

  it("a whole source passes with any change; a partly shown one only when a shown component changed", () => {
    expect(matches(filter, source("aws"))).toBe(true)
    expect(matches(filter, source("stripe", ["api", "dashboard"]))).toBe(true)
    expect(matches(filter, source("stripe", ["dashboard"]))).toBe(false)
    expect(matches(filter, source("stripe"))).toBe(false)
    expect(matches(filter, source("github", ["api"]))).toBe(false)
  })

  it("an incident or maintenance change of a partly shown source passes whichever components moved (the board lists its incidents)", () => {
    expect(matches(filter, source("stripe", [], true))).toBe(true)
    expect(matches(filter, source("stripe", ["dashboard"], true))).toBe(true)
    expect(matches(filter, source("github", [], true))).toBe(false)
  })

  it("monitors by id, or every monitor of an organization", () => {
    expect(matches(filter, monitor("m1", "o1"))).toBe(true)
    expect(matches(filter, monitor("m2", "o1"))).toBe(false)
    expect(matches({ ...filter, organizationId: "o1" }, monitor("m2", "o1"))).toBe(true)
    expect(matches({ ...filter, organizationId: "o1" }, monitor("m3", "o2"))).toBe(false)
  })

  it("the empty filter passes nothing", () => {
    expect(matches(emptyFilter, source("aws"))).toBe(false)
    expect(matches(emptyFilter, monitor("m1", "o1"))).toBe(false)
  })
})

describe("LiveHub on the in-process bus", () => {
  const hubLayer = LiveHub.layer.pipe(Layer.provideMerge(MemoryBus.layer), Layer.provide(withConfig({ LIVE_BUFFER: "2" })))

  layer(hubLayer, { excludeTestServices: true })((it) => {
    it.effect("a subscriber that falls behind gets resync instead of a growing buffer, then the deltas after it", () =>
      Effect.gen(function*() {
        const hub = yield* LiveHub
        const bus = yield* Bus
        const sub = yield* hub.subscribe({ ...emptyFilter, sources: new Set(["aws"]) })
        const other = yield* hub.subscribe({ ...emptyFilter, sources: new Set(["github"]) })
        const start = yield* hub.stats
        for (let i = 0; i < 5; i++) yield* bus.publish(RedisKeys.deltas, JSON.stringify(source("aws")))
        // Wait until the hub has fanned out all five (it reads the bus on its own fiber).
        while ((yield* hub.stats).received < start.received + 5) yield* Effect.sleep("5 millis")
        assert.isAtLeast((yield* hub.stats).resyncs - start.resyncs, 1)
        yield* bus.publish(RedisKeys.deltas, JSON.stringify(source("aws", ["api"])))
        const got = yield* sub.messages.pipe(Stream.take(2), Stream.runCollect)
        assert.deepStrictEqual(got.map((m) => m._tag), ["resync", "delta"])
        const last = got[1]!
        assert.deepStrictEqual(last._tag === "delta" && last.delta.kind === "source" ? last.delta.components.map((c) => c.id) : [], ["api"])
        // The other subscriber's filter let nothing through: its buffer is empty, so end() ends it with nothing.
        yield* other.end
        assert.deepStrictEqual(yield* other.messages.pipe(Stream.runCollect), [])
      }).pipe(Effect.scoped))
  })
})
