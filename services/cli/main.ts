import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Console, Effect, Exit, Layer, Runtime } from "effect"
import { Command, Flag } from "effect/cli"
import { bench } from "./bench.ts"
import { catalog } from "./catalog.ts"
import { http } from "./http.ts"
import { org } from "./org.ts"
import { probe } from "./probe.ts"
import * as Report from "./report.ts"
import { runner } from "./runner.ts"
import { secrets } from "./secrets.ts"
import { serve } from "./serve.ts"
import { simulate } from "./simulate.ts"
import * as Catalog from "../catalog/Catalog.ts"
import * as Demo from "../demo/Demo.ts"
import * as StarterStack from "../demo/StarterStack.ts"
import * as Logging from "../platform/Logging.ts"
import * as Migrations from "../platform/Migrations.ts"
import * as Stores from "../platform/Stores.ts"
import { version } from "../platform/Version.ts"
import * as Cluster from "../poller/Cluster.ts"

const start = Command.make(
  "start",
  {
    demo: Flag.Boolean("demo").pipe(Flag.withDescription(
      "Demo mode: run the upstream simulator as a child process, serve its synthetic sources and keep them changing"
    ), Flag.withDefault(false))
  },
  Effect.fn(function*({ demo }) {
    yield* Migrations.migrateAll()
    const added = yield* Catalog.seedIfEmpty()
    if (added > 0) yield* Effect.logInfo("loaded the default catalog").pipe(Effect.annotateLogs({ sources: added }))
    let featured: ReadonlyArray<string> | undefined
    if (demo) {
      featured = (yield* Demo.start()).featured
    } else {
      // Synthetic sources belong to the demo: kept, but neither served nor polled (services/demo/README.md).
      const disabled = yield* Catalog.disableSynthetic()
      if (disabled > 0) {
        yield* Effect.logInfo("synthetic sources disabled; start with --demo to serve them").pipe(
          Effect.annotateLogs({ sources: disabled })
        )
      }
    }
    // Demo mode gives each new organization a starter stack (services/demo/StarterStack.ts).
    const running = serve(Cluster.single)
    return yield* (featured === undefined ? running : running.pipe(Effect.provide(StarterStack.layer(featured))))
  }, Effect.scoped, Effect.provide(Stores.layer))
).pipe(Command.withDescription(
  "Run everything in one process: stores (embedded unless DATABASE_URL, REDIS_URL, CLICKHOUSE_URL are set), " +
    "migrations, the catalog of real status pages, the pollers and the HTTP server on PORT; " +
    "--demo adds the simulator and its synthetic sources, for a machine without internet"
))

const migrate = Command.make(
  "migrate",
  {},
  Effect.fn(function*() {
    const applied = yield* Migrations.migrateAll()
    yield* Console.log(JSON.stringify(applied))
  }, Effect.provide(Stores.layer))
).pipe(Command.withDescription("Apply pending PostgreSQL and ClickHouse migrations, print what was applied, and exit"))

const statusgrid = Command.make("statusgrid").pipe(
  Command.withDescription("statusgrid: whether the services you depend on are up"),
  Command.withSubcommands([start, runner, http, migrate, org, secrets, probe, simulate, catalog, bench]),
  Command.withGlobalFlags([Report.Verbose])
)

/** A stop by SIGTERM/SIGINT is the normal end of a service: exit 0, not 130. */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

// Failures print as one line (services/cli/report.ts); --verbose adds the whole cause.
const argv = process.argv.slice(2)
statusgrid.pipe(
  Command.run({ version }),
  Report.reportFailures(argv),
  Effect.provide(Layer.mergeAll(NodeServices.layer, Logging.layer, Report.presenterLayer(argv))),
  NodeRuntime.runMain({ teardown })
)
