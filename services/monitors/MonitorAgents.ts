import { Config, Context, Effect, Layer, Option } from "effect"
import * as Fs from "node:fs"
import { type AgentPool, makeAgentPool } from "./HttpCheck.ts"

/** Website-monitor settings of a runner (README, Configuration). */
export const MonitorConfig = Config.all({
  /** Let monitors reach loopback, private and link-local addresses (intranet installs, tests, the simulator). */
  allowPrivate: Config.Boolean("MONITOR_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  /** Connections kept per origin: checks of one host beyond it wait for a free one. */
  maxSocketsPerHost: Config.Int("MONITOR_MAX_SOCKETS_PER_HOST").pipe(Config.withDefault(16)),
  /** Extra trusted CA certificates (PEM file) for endpoints signed by a private CA. */
  caFile: Config.option(Config.String("MONITOR_CA_FILE"))
})

/** The keep-alive connections every monitor check of this process shares, and whether private targets are allowed. */
export class MonitorAgents extends Context.Service<MonitorAgents, {
  readonly pool: AgentPool
  readonly allowPrivate: boolean
}>()("statusgrid/monitors/MonitorAgents") {
  static readonly layer = Layer.effect(
    MonitorAgents,
    Effect.gen(function*() {
      const config = yield* Effect.orDie(MonitorConfig)
      const ca = Option.isSome(config.caFile) ? Fs.readFileSync(config.caFile.value, "utf8") : undefined
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() =>
          makeAgentPool({
            maxSockets: config.maxSocketsPerHost,
            maxFreeSockets: config.maxSocketsPerHost,
            ...(ca ? { ca } : {})
          })
        ),
        (pool) => Effect.sync(() => pool.close())
      )
      return MonitorAgents.of({ pool, allowPrivate: config.allowPrivate })
    })
  )
}
