import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Migrations from "../platform/Migrations.ts"
import * as Stores from "../platform/Stores.ts"
import { parentGone, requireServerStores } from "./httpProcesses.ts"
import { serveHttp } from "./serve.ts"

/**
 * `statusgrid http`: the HTTP server only (API, portal, health, metrics) on the stores' servers, with
 * `HTTP_SHARE_PORT` beside other processes on the same port (decision 0020). `HTTP_PROCESSES` starts
 * these; they can also be run by hand beside `statusgrid runner`.
 */
export const http = Command.make(
  "http",
  {},
  Effect.fn(function*() {
    yield* requireServerStores("statusgrid http")
    return yield* Effect.gen(function*() {
      yield* Migrations.migrateAll()
      return yield* Effect.raceFirst(serveHttp, parentGone)
    }).pipe(Effect.provide(Stores.layer))
  })
).pipe(Command.withDescription(
  "Serve HTTP only (the API, the portal, /healthz, /metrics) on PORT, without pollers or workers, beside runner processes " +
    "on the same port (HTTP_SHARE_PORT=true on all of them); needs DATABASE_URL, REDIS_URL and CLICKHOUSE_URL"
))
