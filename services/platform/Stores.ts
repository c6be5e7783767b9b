import { Config, Effect, Layer, Option, Redacted } from "effect"
import * as MemoryBus from "./Bus/Memory.ts"
import * as RedisBus from "./Bus/Redis.ts"
import { ClickHouse } from "./ClickHouse.ts"
import * as Postgres from "./Postgres.ts"

/** `REDIS_URL` selects Redis; without it the in-process bus. */
export const busLayer = Layer.unwrap(Effect.gen(function*() {
  const url = yield* Config.option(Config.Redacted("REDIS_URL"))
  return Option.isSome(url) ? RedisBus.layer(Redacted.value(url.value)) : MemoryBus.layer
}))

/**
 * Every store a statusgrid process uses, each chosen by its own URL variable:
 * PostgreSQL (configuration), ClickHouse (check results), the bus (state and
 * events). Nothing above this layer knows which implementation it got.
 */
export const layer = Layer.mergeAll(Postgres.layer, ClickHouse.layer, busLayer)
