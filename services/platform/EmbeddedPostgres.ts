import { PGlite } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Schema } from "effect"
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
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

/** Makes a PGlite database in the directory given as its argument, then exits. */
const initializeScript = `
import { PGlite } from "@electric-sql/pglite"
const db = await PGlite.create(process.argv[1])
await db.close()
`

/**
 * A new data directory is initialized (PostgreSQL's initdb, in WASM) by a child
 * process: initdb's memory, about 200 MB, stays in a process's resident set
 * after PGlite frees it (measured: 396 MB resident after initializing, closing
 * and reopening in one process, 167-206 MB when another process initialized).
 */
const initialize = (dataDir: string) =>
  Effect.callback<void, EmbeddedPostgresError>((resume) => {
    if (Fs.existsSync(Path.join(dataDir, "PG_VERSION"))) return resume(Effect.void)
    try {
      Fs.mkdirSync(dataDir, { recursive: true })
    } catch (cause) {
      return resume(Effect.fail(new EmbeddedPostgresError({ message: `cannot create ${dataDir}`, cause })))
    }
    // Run from this package so that the child resolves @electric-sql/pglite as this module does.
    const child = ChildProcess.execFile(process.execPath, ["--input-type=module", "-e", initializeScript, Path.resolve(dataDir)], {
      cwd: Path.dirname(new URL(import.meta.url).pathname)
    }, (error, _stdout, stderr) =>
      resume(error === null ? Effect.void : Effect.fail(new EmbeddedPostgresError({
        message: `cannot initialize PGlite at ${dataDir}: ${stderr.trim().split("\n").at(-1) || error.message}`,
        cause: error
      }))))
    return Effect.sync(() => child.kill())
  })

/**
 * PGlite (PostgreSQL compiled to WASM) persisted in `dataDir`, served on a
 * private Unix socket so that `@effect/sql-pg` talks to it over the ordinary
 * wire protocol: the same client and SQL as a real server.
 * `sharedBuffers` is PostgreSQL's `shared_buffers` (its data directory is real
 * files, so pages beyond it come from the system's page cache).
 * Returns the socket path; both resources close with the scope.
 */
export const start = Effect.fnUntraced(function*(dataDir: string, options: { readonly sharedBuffers: string }) {
  yield* initialize(dataDir)
  const db = yield* Effect.acquireRelease(
    Effect.tryPromise({
      // pg_trgm: the catalog search's indexes (migrations/postgres/0026_source_search.sql).
      try: () => PGlite.create(dataDir, { extensions: { pg_trgm }, postgresqlconf: [`shared_buffers = ${options.sharedBuffers}`] }),
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
