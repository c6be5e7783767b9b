import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { syntheticSpecs } from "../../services/catalog/Synthetic.ts"
import { makeDemoWorld } from "../../services/demo/DemoWorld.ts"
import * as Simulator from "../../services/simulator/Server.ts"

const sources = 30
const keys = syntheticSpecs(sources).map((s) => s.key).filter((_, i) => i % 2 === 0)

/** What a page shows: each source's non-operational leaves and its incidents, open or resolved. */
const view = (sim: Simulator.Simulator) =>
  [...sim.state.sources.values()].map((s) => ({
    key: s.key,
    down: s.components.filter((c) => !c.is_group && c.status !== "operational").map((c) => `${c.id}:${c.status}`),
    incidents: s.incidents.map((i) => `${i.id}:${i.title}:${i.impact}:${i.status}:${i.components.join("+")}`)
  }))

/** The pages after four ticks of a world seeded with `seed`, on a fresh simulator. */
const afterFourTicks = (seed: number) =>
  Effect.gen(function*() {
    const sim = yield* Simulator.make({ port: 0, host: "127.0.0.1", sources })
    const world = makeDemoWorld({ simulatorUrl: sim.url, keys, seed })
    for (let i = 0; i < 4; i++) yield* world.step()
    return view(sim)
  }).pipe(Effect.scoped)

describe("demo world", () => {
  it.effect("opens, updates and resolves incidents and flips components through the control API, only on its sources", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.make({ port: 0, host: "127.0.0.1", sources })
      const world = makeDemoWorld({ simulatorUrl: sim.url, keys, seed: 7, incidentsPerTick: 2, flipsPerTick: 3, incidentTicks: 3 })
      const reports = []
      for (let i = 0; i < 6; i++) reports.push(yield* world.step())
      assert.deepStrictEqual(reports.map((r) => [r.tick, r.opened, r.updated, r.resolved, r.flipped, r.restored, r.failed]), [
        [1, 2, 0, 0, 3, 0, 0],
        [2, 2, 2, 0, 3, 3, 0],
        [3, 2, 2, 0, 3, 3, 0],
        [4, 2, 2, 2, 3, 3, 0],
        [5, 2, 2, 2, 3, 3, 0],
        [6, 2, 2, 2, 3, 3, 0]
      ])
      const state = view(sim)
      const touched = state.filter((s) => s.incidents.length > 0 || s.down.length > 0).map((s) => s.key)
      assert.isAbove(touched.length, 3)
      for (const key of touched) assert.include(keys, key)
      const incidents = [...sim.state.sources.values()].flatMap((s) => s.incidents)
      assert.strictEqual(incidents.length, 12)
      // Opened at ticks 4, 5, 6 are still open; the first six went through an update and were resolved.
      assert.strictEqual(incidents.filter((i) => i.resolved_at === null).length, 6)
      for (const i of incidents.filter((i) => i.resolved_at !== null)) {
        assert.deepStrictEqual(i.updates.map((u) => u.status), ["investigating", "identified", "resolved"])
      }
      // Components of resolved incidents are operational again; open incidents' components are not.
      for (const s of sim.state.sources.values()) {
        for (const i of s.incidents.filter((i) => i.resolved_at === null)) {
          assert.isTrue(i.components.every((id) => s.components.find((c) => c.id === id)!.status !== "operational"))
        }
      }
    }).pipe(Effect.scoped), 30_000)

  it.effect("the same seed on the same pages makes the same changes; another seed, others", () =>
    Effect.gen(function*() {
      const first = yield* afterFourTicks(42)
      assert.deepStrictEqual(yield* afterFourTicks(42), first)
      assert.notDeepEqual(yield* afterFourTicks(43), first)
    }), 30_000)

  it.effect("a simulator that is gone makes failed changes, not a failed world", () =>
    Effect.gen(function*() {
      const world = makeDemoWorld({ simulatorUrl: "http://127.0.0.1:9", keys, seed: 1 })
      const report = yield* world.step()
      assert.deepStrictEqual([report.opened, report.flipped, report.failed], [0, 0, 5])
    }), 30_000)
})
