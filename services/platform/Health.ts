import { Clock, Context, Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Bus } from "./Bus.ts"
import { ClickHouse } from "./ClickHouse.ts"
import { PostgresBackend } from "./Postgres.ts"

export const StoreHealth = Schema.Struct({
  status: Schema.Literals(["up", "down"]),
  backend: Schema.String,
  target: Schema.String,
  latency_ms: Schema.Number,
  error: Schema.optional(Schema.String)
})
export type StoreHealth = typeof StoreHealth.Type

export const HealthReport = Schema.Struct({
  status: Schema.Literals(["ok", "degraded"]),
  version: Schema.String,
  uptime_s: Schema.Number,
  stores: Schema.Struct({ postgres: StoreHealth, clickhouse: StoreHealth, bus: StoreHealth })
})
export type HealthReport = typeof HealthReport.Type

const timeout = Duration.seconds(3)

const probe = Effect.fn("Health.probe")(function*<E>(backend: string, target: string, check: Effect.Effect<unknown, E>) {
  const started = performance.now()
  const result = yield* check.pipe(Effect.timeout(timeout), Effect.result)
  const latency_ms = Math.round((performance.now() - started) * 10) / 10
  return result._tag === "Success"
    ? { status: "up", backend, target, latency_ms } satisfies StoreHealth
    : { status: "down", backend, target, latency_ms, error: describe(result.failure) } satisfies StoreHealth
})

const describe = (error: unknown): string => {
  const cause = (error as { cause?: unknown })?.cause
  if (cause instanceof Error) return cause.message
  if (error instanceof Error) return error.message
  return String(error)
}

/** Checks each store with a short query and reports its state and latency. */
export class Health extends Context.Service<Health, {
  readonly check: Effect.Effect<HealthReport>
}>()("statusgrid/platform/Health") {
  static readonly layer = (version: string) =>
    Layer.effect(
      Health,
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const pg = yield* PostgresBackend
        const ch = yield* ClickHouse
        const bus = yield* Bus
        const started = yield* Clock.currentTimeMillis
        const check = Effect.gen(function*() {
          const [postgres, clickhouse, busHealth] = yield* Effect.all([
            probe(pg.kind, pg.target, sql`SELECT 1`),
            probe(ch.kind, ch.target, ch.ping),
            probe(bus.kind, bus.target, bus.ping)
          ], { concurrency: "unbounded" })
          const allUp = [postgres, clickhouse, busHealth].every((s) => s.status === "up")
          return {
            status: allUp ? "ok" : "degraded",
            version,
            uptime_s: Math.round(((yield* Clock.currentTimeMillis) - started) / 1000),
            stores: { postgres, clickhouse, bus: busHealth }
          } satisfies HealthReport
        })
        return Health.of({ check })
      })
    )
}
