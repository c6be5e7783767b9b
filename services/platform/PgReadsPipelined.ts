/**
 * A `SqlClient` on a PostgreSQL server whose plain reads share connections (decision 0031): up to
 * `pipeline` reads of different fibers are written to one connection together and answered in
 * order (@effect/sql-pg's `multiplex`), while every other statement — a write, a locking read, a
 * transaction, a reserved session, a stream — takes a connection of its own from a second pool, as
 * every statement did before.
 *
 * Why reads only: a statement waiting holds up those queued behind it on its connection. A plain
 * read (MVCC) never waits on another transaction's row locks; a write, a `FOR UPDATE`/`FOR SHARE`
 * read or an advisory lock can, and sharing its connection would stall unrelated statements until
 * the lock holder finishes (or for ever, when the holder waits on one of them).
 *
 * The same parts as `PgClient.make` (the pg compiler, prepared transaction controls, a COMMIT that
 * fails when PostgreSQL answers ROLLBACK), with two pools behind one statement borrower.
 */
import { PgClient, type PgConnection, PgPool } from "@effect/sql-pg"
import { Effect, Layer, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { SqlError, UnknownError } from "effect/sql/SqlError"

const readStart = /^\s*\(?\s*(?:SELECT|WITH|VALUES|TABLE)\b/iu
/** Words of a statement that may write, take a lock or change the session: such a statement has a connection to itself. */
const mayWaitOrWrite = /\b(?:INSERT|UPDATE|DELETE|MERGE|LOCK|SHARE|COPY|CALL|DO|SET|LISTEN|NOTIFY|pg_advisory\w*|pg_try_advisory\w*|nextval|setval|set_config|pg_notify|pg_cancel_backend|pg_terminate_backend)\b/iu

/**
 * Whether `sql` only reads: it starts as a query (`SELECT`, `WITH`, `VALUES`, `TABLE`) and names
 * nothing that writes, locks rows (`FOR UPDATE`, `FOR SHARE`), takes an advisory lock or changes the
 * session. A read judged otherwise (a column named `share`) only loses the sharing.
 */
export const onlyReads = (sql: string): boolean => readStart.test(sql) && !mayWaitOrWrite.test(sql)

/**
 * `onlyReads`, remembered per statement text: its scan costs 12 µs for a 2-KB statement where the
 * lookup (hashing a fresh copy of the text) costs 3 µs; texts differ by their placeholders' count only.
 */
const judged = new Map<string, boolean>()
const onlyReadsRemembered = (sql: string): boolean => {
  const known = judged.get(sql)
  if (known !== undefined) return known
  const reads = onlyReads(sql)
  if (judged.size >= 2_000) judged.clear()
  judged.set(sql, reads)
  return reads
}

type Rows = <A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>

const rowsOf = (result: Effect.Effect<PgConnection.Result, SqlError>, transformRows: Rows | undefined) =>
  Effect.map(result, (r) => transformRows === undefined ? r.rows : transformRows(r.rows as ReadonlyArray<object>))

/** A session as `SqlClient` drives it. */
class Session implements Connection {
  private readonly c: PgConnection.PgConnection
  constructor(c: PgConnection.PgConnection) {
    this.c = c
  }
  execute(sql: string, params: ReadonlyArray<unknown>, transformRows: Rows | undefined) {
    return rowsOf(this.c.query(sql, params), transformRows)
  }
  executeRaw(sql: string, params: ReadonlyArray<unknown>) {
    return this.c.query(sql, params)
  }
  executeValues(sql: string, params: ReadonlyArray<unknown>) {
    return this.c.queryValues(sql, params)
  }
  executeValuesUnprepared(sql: string, params: ReadonlyArray<unknown>) {
    return this.c.queryValues(sql, params, false)
  }
  executeUnprepared(sql: string, params: ReadonlyArray<unknown>, transformRows: Rows | undefined) {
    return rowsOf(this.c.query(sql, params, false), transformRows)
  }
  executeStream(sql: string, params: ReadonlyArray<unknown>, transformRows: Rows | undefined) {
    const rows = this.c.stream(sql, params)
    return transformRows === undefined ? rows : Stream.mapArray(rows, (chunk) => transformRows(chunk as ReadonlyArray<object>) as typeof chunk)
  }
}
const connectionOf = (c: PgConnection.PgConnection): Connection => new Session(c)

/** PostgreSQL answers `ROLLBACK` to a `COMMIT` of an aborted transaction. */
const commit = (conn: Connection) =>
  Effect.flatMap(conn.executeRaw("COMMIT", []), (result) =>
    (result as PgConnection.Result).command === "ROLLBACK"
      ? Effect.fail(new SqlError({
        reason: new UnknownError({
          cause: new Error("COMMIT rolled back an aborted transaction"),
          message: "PgClient: COMMIT rolled back an aborted transaction",
          operation: "commit"
        })
      }))
      : Effect.void)

export interface Options extends PgPool.Config {
  /** Connections of the exclusive pool (writes, locking reads, transactions). */
  readonly maxConnections: number
  /** Reads sharing one connection at most; 1: none shared (every statement its own connection). */
  readonly pipeline: number
}

/** The client, scoped: both pools close with the scope. */
export const make = Effect.fnUntraced(function*(options: Options) {
  const exclusive = yield* PgPool.make({ ...options, multiplex: false })
  const shared = options.pipeline > 1
    ? yield* PgPool.make({
      ...options,
      // Opened as reads need them: another only once `pipeline` share each open one.
      maxConnections: Math.max(1, Math.ceil(options.maxConnections / 2)),
      multiplex: true,
      multiplexConcurrency: options.pipeline
    })
    : undefined
  const poolOf = (sql: string) => shared !== undefined && onlyReadsRemembered(sql) ? shared : exclusive
  /** `f` on a session of the pool `sql` calls for, lent for that statement only. */
  const lend = <A>(sql: string, f: (c: Connection) => Effect.Effect<A, SqlError>) => poolOf(sql).use((c) => f(connectionOf(c)))
  // What a statement outside a transaction runs on.
  const borrowed: Connection = {
    execute: (sql, params, transformRows) => lend(sql, (c) => c.execute(sql, params, transformRows)),
    executeRaw: (sql, params) => lend(sql, (c) => c.executeRaw(sql, params)),
    executeValues: (sql, params) => lend(sql, (c) => c.executeValues(sql, params)),
    executeValuesUnprepared: (sql, params) => lend(sql, (c) => c.executeValuesUnprepared(sql, params)),
    executeUnprepared: (sql, params, transformRows) => lend(sql, (c) => c.executeUnprepared(sql, params, transformRows)),
    executeStream: (sql, params, transformRows) =>
      Stream.unwrap(Effect.map(exclusive.get, (c) => connectionOf(c).executeStream(sql, params, transformRows)))
  }
  return yield* SqlClient.make({
    acquirer: Effect.map(exclusive.get, connectionOf),
    borrower: (f) => f(borrowed),
    transactionAcquirer: Effect.map(exclusive.reserve, connectionOf),
    compiler: PgClient.makeCompiler(),
    driver: "pg",
    prepareTransactionControls: true,
    commit,
    releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`,
    spanAttributes: [
      ["db.system.name", "postgresql"],
      ["db.namespace", options.database ?? options.username ?? "postgres"],
      ["server.address", options.host ?? "localhost"],
      ["server.port", options.port ?? 5432]
    ]
  })
})

/** `SqlClient` from `make`, for the layer's lifetime. */
export const layer = (options: Options) =>
  Layer.effect(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
