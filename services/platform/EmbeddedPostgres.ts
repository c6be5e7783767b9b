import { PGlite } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Schema } from "effect"
import * as Crypto from "node:crypto"
import * as Os from "node:os"
import * as Path from "node:path"

export class EmbeddedPostgresError extends Schema.TaggedError<EmbeddedPostgresError>()("EmbeddedPostgresError", {
  message: Schema.String,
  cause: Schema.Defect()
}) {}

/**
 * Connections the PGlite socket server accepts at once. The client's pool uses
 * one, but a request interrupted mid-query (a browser or load generator that
 * hangs up) makes the pool drop that connection and open another while the old
 * socket waits for its query to leave PGlite's queue. At 4, a burst of hang-ups
 * (autocannon closing 50 connections) filled the slots, the server answered the
 * next connect with "Too many connections" and a request that nobody interrupted
 * failed with EPIPE (a 500). Closing sockets cost nothing but a slot.
 */
const socketMaxConnections = 256

/**
 * PGlite (PostgreSQL compiled to WASM) persisted in `dataDir`, served on a
 * private Unix socket so that `@effect/sql-pg` talks to it over the ordinary
 * wire protocol: the same client and SQL as a real server.
 * Returns the socket path; both resources close with the scope.
 */
export const start = Effect.fnUntraced(function*(dataDir: string) {
  const db = yield* Effect.acquireRelease(
    Effect.tryPromise({
      // pg_trgm: the catalog search's indexes (migrations/postgres/0026_source_search.sql).
      try: () => PGlite.create(dataDir, { extensions: { pg_trgm } }),
      catch: (cause) => new EmbeddedPostgresError({ message: `cannot open PGlite at ${dataDir}`, cause })
    }),
    (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
  )
  // Unix socket paths are limited to ~107 bytes, so the socket lives in the
  // temp dir under a random name rather than inside a possibly long DATA_DIR.
  const socketPath = Path.join(Os.tmpdir(), `statusgrid-pg-${process.pid}-${Crypto.randomBytes(4).toString("hex")}.sock`)
  yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: socketMaxConnections })
        await server.start()
        return server
      },
      catch: (cause) => new EmbeddedPostgresError({ message: `cannot listen on ${socketPath}`, cause })
    }),
    (server) => Effect.promise(() => server.stop()).pipe(Effect.ignore)
  )
  return socketPath
})
