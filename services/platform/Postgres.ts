import { PgClient } from "@effect/sql-pg"
import { Config, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { DataDir } from "./DataDir.ts"
import * as EmbeddedPostgres from "./EmbeddedPostgres.ts"
import * as PgReadsPipelined from "./PgReadsPipelined.ts"

/** Which PostgreSQL the process talks to; only health reports and logs care. */
export class PostgresBackend extends Context.Service<PostgresBackend, {
  readonly kind: "postgres" | "pglite"
  readonly target: string
}>()("statusgrid/platform/PostgresBackend") {}

const common = {
  applicationName: "statusgrid",
  connectTimeout: "10 seconds"
} as const

/**
 * How many plain reads of different fibers share one pooled connection of a server, written to it
 * together (`DATABASE_PIPELINE`, decision 0031): 8. Writes, locking reads and transactions have a
 * connection to themselves whatever the setting (`PgReadsPipelined.ts`); 1 shares nothing.
 */
export const defaultPipeline = 8

/**
 * A real PostgreSQL server at `url`: `maxConnections` for statements that may write or lock (one
 * statement each), and up to half as many more opened as plain reads need them, each shared by up
 * to `pipeline` reads.
 */
export const layerServer = (url: string, options: { readonly maxConnections?: number; readonly pipeline?: number } = {}) =>
  Layer.merge(
    PgReadsPipelined.layer({
      ...common,
      url: Redacted.make(url),
      maxConnections: options.maxConnections ?? 10,
      pipeline: options.pipeline ?? defaultPipeline
    }),
    Layer.succeed(PostgresBackend, PostgresBackend.of({ kind: "postgres", target: describeUrl(url) }))
  )

/** PostgreSQL's `shared_buffers` for PGlite: a size such as 32MB (kB, MB or GB). */
const SharedBuffers = Schema.String.check(Schema.isPattern(/^[1-9][0-9]{0,6}(kB|MB|GB)$/u))

/** PGlite under `DATA_DIR/postgres`, reached through the same wire-protocol client. */
export const layerEmbedded = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* DataDir
  const path = dataDir.sub("postgres")
  const sharedBuffers = yield* Config.schema(SharedBuffers, "EMBEDDED_PG_SHARED_BUFFERS").pipe(Config.withDefault("32MB"))
  return Layer.merge(
    PgClient.layerFrom(Effect.gen(function*() {
      const socket = yield* EmbeddedPostgres.start(path, { sharedBuffers })
      return yield* PgClient.make({
        ...common,
        path: socket,
        username: "postgres",
        database: "postgres",
        // PGlite runs one query at a time, and the socket server's multiplexing of several
        // connections interleaves extended-protocol messages under load: one connection, queued.
        maxConnections: 1
      })
    })),
    Layer.succeed(PostgresBackend, PostgresBackend.of({ kind: "pglite", target: path }))
  )
})).pipe(Layer.provide(DataDir.layer))

/** `DATABASE_URL` selects a server; without it the embedded PGlite is used. */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const url = yield* Config.option(Config.Redacted("DATABASE_URL"))
  const maxConnections = yield* Config.Int("DATABASE_POOL_SIZE").pipe(Config.withDefault(10))
  const pipeline = yield* Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 256 })), "DATABASE_PIPELINE").pipe(
    Config.withDefault(defaultPipeline)
  )
  return Option.match(url, {
    onNone: () => layerEmbedded,
    onSome: (url) => layerServer(Redacted.value(url), { maxConnections, pipeline })
  })
}))

/** host:port/database of a connection URL, without credentials, for logs. */
export const describeUrl = (url: string): string => {
  try {
    const u = new URL(url)
    return `${u.hostname}:${u.port || "5432"}${u.pathname}`
  } catch {
    return "(unparseable url)"
  }
}
