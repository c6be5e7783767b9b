import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Migrations from "../platform/Migrations.ts"
import * as Stores from "../platform/Stores.ts"
import * as Cluster from "../poller/Cluster.ts"
import { serve } from "./serve.ts"

/** `statusgrid runner`: join the cluster of runners that share the poller shards, and serve HTTP on PORT. */
export const runner = Command.make(
  "runner",
  {},
  Effect.fn(function*() {
    yield* Migrations.migrateAll()
    return yield* serve(Cluster.socket)
  }, Effect.provide(Stores.layer))
).pipe(Command.withDescription(
  "Join the cluster of runner processes sharing the poller shards (needs DATABASE_URL and REDIS_URL; " +
    "RUNNER_HOST and RUNNER_PORT for runner-to-runner traffic) and serve HTTP on PORT"
))
