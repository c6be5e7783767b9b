import { type ClickHouseClient, createClient } from "@clickhouse/client"
import { createChdbConnection } from "chdb/connection"
import { Config, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { DataDir } from "./DataDir.ts"

export class ClickHouseError extends Schema.TaggedError<ClickHouseError>()("ClickHouseError", {
  operation: Schema.String,
  cause: Schema.Defect()
}) {}

export type QueryParams = Readonly<Record<string, unknown>>

export interface InsertOptions {
  /** Same batch, same token, across retries and restarts; see `ClickHouse.insert`. */
  readonly token?: string
}

/**
 * ClickHouse, embedded (chDB) or a server over HTTP, behind one interface.
 * Statements are unqualified: each connection is bound to the statusgrid
 * database (`USE` on chDB, the `database` setting on a server).
 */
export class ClickHouse extends Context.Service<ClickHouse, {
  readonly kind: "chdb" | "server"
  readonly target: string
  readonly database: string
  /** DDL and other statements that return no rows. */
  command(query: string, params?: QueryParams): Effect.Effect<void, ClickHouseError>
  /** Rows as plain objects (JSONEachRow); callers decode them with a Schema. */
  query(query: string, params?: QueryParams): Effect.Effect<ReadonlyArray<Record<string, unknown>>, ClickHouseError>
  /**
   * One batch of rows into `table`; a timestamp may be ISO 8601 text or, for `DateTime64(3)`,
   * milliseconds since the epoch (cheaper for ClickHouse to read; decision 0024).
   * `token` is the batch's `insert_deduplication_token`: an insert repeated
   * with the same token (a retry after a timeout) is dropped by tables with
   * `non_replicated_deduplication_window` (migrations/clickhouse/0003).
   */
  insert(
    table: string,
    rows: ReadonlyArray<Record<string, unknown>>,
    options?: InsertOptions
  ): Effect.Effect<void, ClickHouseError>
  readonly ping: Effect.Effect<void, ClickHouseError>
}>()("statusgrid/platform/ClickHouse") {
  /** A ClickHouse server; `url` is its HTTP interface, e.g. http://default:@localhost:8123 */
  static readonly layerServer = (url: string, database: string) =>
    Layer.effect(
      ClickHouse,
      Effect.gen(function*() {
        const parsed = new URL(url)
        parsed.pathname = "/"
        // The database may not exist yet: create it through a connection bound to `default`.
        const bootstrap = yield* open(() => createClient({ url: parsed.toString(), database: "default" }))
        yield* run("create database", () =>
          bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}` }))
        const client = yield* open(() => createClient({ url: parsed.toString(), database }))
        return make(client, "server", `${parsed.host}/${database}`, database)
      })
    )

  /** chDB persisted under `path`. One process owns a chDB data path. */
  static readonly layerEmbedded = (path: string, database: string) =>
    Layer.effect(
      ClickHouse,
      Effect.gen(function*() {
        const client = yield* open(() => createClient({ connection: chdbConnection(path) }))
        yield* run("create database", () =>
          client.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}` }))
        // chDB ignores the `database` client setting but keeps `USE` for the session.
        yield* run("use database", () => client.command({ query: `USE ${quoteIdent(database)}` }))
        return make(client, "chdb", path, database)
      })
    )

  /** `CLICKHOUSE_URL` selects a server; without it chDB under `DATA_DIR/clickhouse`. */
  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    const url = yield* Config.option(Config.Redacted("CLICKHOUSE_URL"))
    const database = yield* Config.String("CLICKHOUSE_DATABASE").pipe(Config.withDefault("statusgrid"))
    if (Option.isSome(url)) return ClickHouse.layerServer(Redacted.value(url.value), database)
    return Layer.unwrap(DataDir.useSync((dir) => ClickHouse.layerEmbedded(dir.sub("clickhouse"), database))).pipe(
      Layer.provide(DataDir.layer)
    )
  }))
}

/**
 * chdb/connection implements @clickhouse/client's Connection interface but is
 * typed against its own copy of @clickhouse/client-common, so the two
 * declarations differ nominally (private fields) though identical at runtime.
 */
const chdbConnection = (path: string) =>
  createChdbConnection({ path }) as unknown as NonNullable<NonNullable<Parameters<typeof createClient>[0]>["connection"]>

const quoteIdent = (name: string) => "`" + name.replaceAll("\\", "\\\\").replaceAll("`", "\\`") + "`"

const open = (create: () => ClickHouseClient) =>
  Effect.acquireRelease(
    Effect.try({ try: create, catch: (cause) => new ClickHouseError({ operation: "connect", cause }) }),
    (client) => Effect.promise(() => client.close()).pipe(Effect.ignore)
  )

const run = <A>(operation: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => new ClickHouseError({ operation, cause }) })

/**
 * The token is always sent, empty when there is none: chDB applies settings
 * with `SET`, which lasts for the session, so a token left by one insert
 * would otherwise drop the next insert of the same table. Materialized views
 * are fed even by a block the table dropped as a repeat, unless
 * `deduplicate_blocks_in_dependent_materialized_views` (default 0 on servers)
 * lets their target tables drop it too.
 */
const insertSettings = (token: string | undefined) =>
  ({
    date_time_input_format: "best_effort",
    insert_deduplication_token: token ?? "",
    deduplicate_blocks_in_dependent_materialized_views: 1
  }) as const
const querySettings = { output_format_json_quote_64bit_integers: 0 } as const

const make = (client: ClickHouseClient, kind: "chdb" | "server", target: string, database: string) =>
  ClickHouse.of({
    kind,
    target,
    database,
    command: (query, params) =>
      run("command", () => client.command({ query, ...(params ? { query_params: { ...params } } : {}) })).pipe(
        Effect.asVoid
      ),
    query: (query, params) =>
      run("query", async () => {
        const result = await client.query({
          query,
          format: "JSONEachRow",
          // Servers quote 64-bit integers in JSON by default; chDB does not. Same rows from both.
          clickhouse_settings: querySettings,
          ...(params ? { query_params: { ...params } } : {})
        })
        return result.json<Record<string, unknown>>()
      }),
    insert: (table, rows, options) =>
      rows.length === 0 ? Effect.void : run(`insert ${table}`, () =>
        client.insert({
          table,
          values: [...rows],
          format: "JSONEachRow",
          clickhouse_settings: insertSettings(options?.token)
        })).pipe(
          Effect.asVoid
        ),
    ping: run("ping", async () => {
      const result = await client.ping()
      if (!result.success) throw result.error
    })
  })
