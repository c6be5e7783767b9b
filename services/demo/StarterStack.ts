import { Duration, Effect, Layer, Schedule, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Principal } from "../domain/Principal.ts"
import { OrganizationCreated } from "../orgs/OrganizationCreated.ts"
import { Stacks } from "../orgs/Stacks.ts"
import { rowsOf } from "../platform/Rows.ts"

/** How long a new organization waits for the featured sources' first poll (they are polled every 30 s). */
const firstPollWait = Duration.seconds(45)
/** Components of each featured source after the first (a whole source counts as all of its components on the plan). */
const componentsPerSource = 2

const componentRows = rowsOf("components", Schema.Struct({ key: Schema.String, id: Schema.String }))

/**
 * Demo mode's starter stack: every organization created while the demo runs
 * gets one stack, "Demo production", showing the featured sources (the ones
 * the featured demo world changes every tick, services/demo/Demo.ts): the
 * first as a whole source, the others by their first components, added
 * through the Stacks service as the organization's Admin, within its plan
 * (the Free plan's 10 components; what does not fit is left out). A featured
 * source gets its components from its first poll, so creation waits for that
 * (at most 45 s, usually none: the demo has been running for a while).
 */
export const layer = (featured: ReadonlyArray<string>) =>
  Layer.effect(
    OrganizationCreated,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const stacks = yield* Stacks

      const components = sql`
        SELECT s.key, c.id FROM components c JOIN sources s ON s.id = c.source_id
        WHERE s.key = ANY(${featured}::text[]) AND NOT c.is_group
        ORDER BY s.key, c.position, c.name, c.id`.pipe(Effect.flatMap(componentRows), Effect.orDie)

      /** The featured sources' components, once each of them has been polled (or what there is after the wait). */
      const firstComponents = components.pipe(
        Effect.flatMap((rows) => (featured.every((key) => rows.some((r) => r.key === key)) ? Effect.succeed(rows) : Effect.fail(rows))),
        Effect.retry({ schedule: Schedule.spaced("500 millis").pipe(Schedule.upTo({ duration: firstPollWait })) }),
        Effect.catch((rows) => Effect.succeed(rows))
      )

      const created = (principal: Principal) =>
        Effect.gen(function*() {
          const rows = yield* firstComponents
          const stack = yield* stacks.create(principal, {
            name: "Demo production",
            description: "A starter stack of demo sources that change while you watch: the demo world opens incidents and flips components every tick."
          })
          const [whole, ...others] = featured
          const add = (input: Parameters<typeof stacks.addItem>[2]) =>
            stacks.addItem(principal, stack.id, input).pipe(Effect.asVoid, Effect.catchTag("PlanLimitReached", () => Effect.void))
          if (whole !== undefined) yield* add({ kind: "source", source_key: whole })
          for (const key of others) {
            for (const row of rows.filter((r) => r.key === key).slice(0, componentsPerSource)) {
              yield* add({ kind: "component", component_id: row.id })
            }
          }
        })

      return { created }
    })
  ).pipe(Layer.provide(Stacks.layer))
