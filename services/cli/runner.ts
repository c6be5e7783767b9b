import { Effect, Layer } from "effect"
import { Command } from "effect/cli"
import * as Http from "../api/Http.ts"
import { Health } from "../platform/Health.ts"
import * as Migrations from "../platform/Migrations.ts"
import * as Stores from "../platform/Stores.ts"
import { version } from "../platform/Version.ts"
import * as Cluster from "../poller/Cluster.ts"
import * as Poller from "../poller/Poller.ts"

/** `statusgrid runner`: join the cluster of runners that share the poller shards, and serve HTTP on PORT. */
export const runner = Command.make(
  "runner",
  {},
  Effect.fn(function*() {
    yield* Migrations.migrateAll()
    return yield* Layer.launch(Layer.mergeAll(
      Poller.layer.pipe(Layer.provide(Cluster.socket)),
      Http.serverLayer.pipe(Layer.provide(Health.layer(version)))
    ))
  }, Effect.provide(Stores.layer))
).pipe(Command.withDescription(
  "Join the cluster of runner processes sharing the poller shards (needs DATABASE_URL and REDIS_URL; " +
    "RUNNER_HOST and RUNNER_PORT for runner-to-runner traffic) and serve HTTP on PORT"
))
