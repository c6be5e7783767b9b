import { Effect } from "effect"
import type { ComponentStatus, IncidentImpact } from "../domain/Status.ts"
import { prng } from "../platform/Prng.ts"
import { DemoError } from "./SimulatorChild.ts"

/** How the demo world moves the simulator's sources, each tick. */
export interface DemoWorldOptions {
  /** The simulator's base URL; changes go through its control API (`/_control/...`). */
  readonly simulatorUrl: string
  /** Sources the world may change (the demo picks those polled often, so changes show within a minute). */
  readonly keys: ReadonlyArray<string>
  /** Same seed, same simulator state: same changes. */
  readonly seed: number
  /** Incidents opened per tick (each on 1-2 components, which go degraded or critical with it). */
  readonly incidentsPerTick?: number
  /** Components flipped to degraded or critical per tick, back to operational the tick after. */
  readonly flipsPerTick?: number
  /** Ticks an incident stays open: one update the tick after it opens, resolved after this many. */
  readonly incidentTicks?: number
}

/** What one tick did, by kind of change. */
export interface TickReport {
  readonly tick: number
  readonly opened: number
  readonly updated: number
  readonly resolved: number
  readonly flipped: number
  readonly restored: number
  /** Changes the simulator refused or that could not reach it (logged). */
  readonly failed: number
}

/** The parts of a simulator source (`GET /_control/sources/<key>`) the world reads. */
interface SimSourceView {
  readonly components: ReadonlyArray<{ readonly id: string; readonly status: ComponentStatus; readonly is_group: boolean }>
}

const titles = [
  "Elevated error rates", "Increased latency", "Degraded performance", "Partial outage", "Delayed processing",
  "Intermittent failures", "Connectivity issues", "Requests timing out"
]
const impacts: ReadonlyArray<readonly [IncidentImpact, ComponentStatus]> = [
  ["minor", "degraded"], ["minor", "degraded"], ["major", "critical"], ["critical", "critical"]
]

/** Runs one change; a failure is logged and counted, never stops the world. */
const attempt = <A>(change: Effect.Effect<A, DemoError>) =>
  change.pipe(
    Effect.as(true),
    Effect.catch((error) => Effect.logWarning("demo world: a change failed", error.message).pipe(Effect.as(false)))
  )

/**
 * A small world that keeps the simulator's upstream pages moving: each tick it
 * opens a few incidents (their components degraded or down), updates and
 * resolves older ones, and flips a few components for one tick. Randomness
 * comes from `seed` alone, so a test can replay it; a demo seeds it by time.
 */
export const makeDemoWorld = (options: DemoWorldOptions) => {
  const random = prng(options.seed)
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
  const incidentsPerTick = options.incidentsPerTick ?? 2
  const flipsPerTick = options.flipsPerTick ?? 3
  const incidentTicks = Math.max(2, options.incidentTicks ?? 3)
  const base = options.simulatorUrl.replace(/\/+$/, "")
  const open: Array<{ key: string; id: string; tick: number }> = []
  const flipped: Array<{ key: string; id: string; tick: number }> = []
  let tick = 0

  const control = (method: string, path: string, body?: unknown) =>
    Effect.tryPromise({
      try: async (signal) => {
        const response = await fetch(`${base}/_control/sources/${path}`, {
          method,
          signal,
          headers: body === undefined ? {} : { "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        const text = await response.text()
        if (!response.ok) throw new Error(`${response.status} ${text}`)
        return JSON.parse(text) as unknown
      },
      catch: (cause) =>
        new DemoError({ message: `${method} ${path}: ${cause instanceof Error ? cause.message : String(cause)}` })
    })

  const busy = () => new Set([...open.map((o) => o.key), ...flipped.map((f) => f.key)])

  /** A source not being changed already, and its operational leaf components; undefined when there is none. */
  const candidate = Effect.fnUntraced(function*() {
    const taken = busy()
    const free = options.keys.filter((k) => !taken.has(k))
    if (free.length === 0) return undefined
    const key = pick(free)
    const source = (yield* control("GET", key)) as SimSourceView
    const leaves = source.components.filter((c) => !c.is_group && c.status === "operational").map((c) => c.id)
    return leaves.length === 0 ? undefined : { key, leaves }
  })

  const step = Effect.fn("DemoWorld.step")(function*() {
    tick++
    let updated = 0, resolved = 0, restored = 0, opened = 0, flips = 0, failed = 0
    const count = (ok: boolean) => (ok ? 1 : (failed++, 0))

    const due = open.filter((o) => tick - o.tick >= incidentTicks)
    for (const incident of open.filter((o) => tick - o.tick === 1)) {
      updated += count(yield* attempt(control("POST", `${incident.key}/incidents/${incident.id}/updates`, {
        status: "identified",
        body: "The issue has been identified and a fix is being implemented."
      })))
    }
    for (const incident of due) {
      open.splice(open.indexOf(incident), 1)
      resolved += count(yield* attempt(control("POST", `${incident.key}/incidents/${incident.id}/resolve`, {})))
    }
    const back = flipped.filter((f) => tick - f.tick >= 1)
    for (const flip of back) {
      flipped.splice(flipped.indexOf(flip), 1)
      restored += count(yield* attempt(control("PUT", `${flip.key}/components/${flip.id}`, { status: "operational" })))
    }

    for (let i = 0; i < incidentsPerTick; i++) {
      const ok = yield* attempt(Effect.gen(function*() {
        const found = yield* candidate()
        if (found === undefined) return
        const components = [...new Set([pick(found.leaves), ...(random() < 0.4 ? [pick(found.leaves)] : [])])]
        const [impact, status] = pick(impacts)
        const created = (yield* control("POST", `${found.key}/incidents`, {
          title: pick(titles),
          impact,
          components,
          component_status: status
        })) as { id: string }
        open.push({ key: found.key, id: created.id, tick })
        opened++
      }))
      if (!ok) failed++
    }
    for (let i = 0; i < flipsPerTick; i++) {
      const ok = yield* attempt(Effect.gen(function*() {
        const found = yield* candidate()
        if (found === undefined) return
        const id = pick(found.leaves)
        yield* control("PUT", `${found.key}/components/${id}`, { status: random() < 0.75 ? "degraded" : "critical" })
        flipped.push({ key: found.key, id, tick })
        flips++
      }))
      if (!ok) failed++
    }
    return { tick, opened, updated, resolved, flipped: flips, restored, failed } satisfies TickReport
  })

  return { step }
}
