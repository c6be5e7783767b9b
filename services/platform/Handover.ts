import { Effect, Schema } from "effect"
import type { Scope } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { takePidLock } from "./PidLock.ts"

/** The hand-over directory could not be used, or an item could be neither kept in memory nor written to disk. */
export class HandoverFailed extends Schema.TaggedError<HandoverFailed>()("HandoverFailed", {
  path: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

export interface HandoverOptions<A> {
  /** Where items wait on disk once memory is full (and at shutdown); replayed first on the next start. */
  readonly dir: string
  /** Most items held in memory before new ones go to disk. */
  readonly memoryItems: number
  /** Items per spill file (also the most items lost if the process dies while spilling). */
  readonly fileItems: number
  /** Decodes one item read back from disk (items are written as JSON). */
  readonly decode: (input: unknown) => A
}

/**
 * An ordered queue of items waiting to be handed to a store that may be away:
 * the oldest in memory (`memoryItems` at most), then spill files on disk,
 * then the newest in memory (fewer than `fileItems`, written out as a file once
 * that many wait). Whoever drains it reads `peek` (the oldest items), applies
 * them, then `shift`s those applied, so an item leaves only once applied. A file is deleted once its
 * last item is shifted: a process that dies meanwhile applies that file's
 * items again on its next start (at least once).
 *
 * Disk writes are synchronous (temporary file, fsync, rename), so the
 * sequence of items never depends on fiber interleaving; they only happen
 * while the store has been away for `memoryItems` changes.
 */
export interface Handover<A> {
  /** Accepts an item at the end of the queue; fails (accepting nothing) only when memory is full and the disk refuses it. */
  offer(item: A): Effect.Effect<void, HandoverFailed>
  /** Up to `n` oldest items (read from disk when their turn comes); none when empty. */
  peek(n: number): Effect.Effect<ReadonlyArray<A>, HandoverFailed>
  /** Removes the `n` oldest items (at most what the last `peek` returned). */
  shift(n: number): Effect.Effect<void, HandoverFailed>
  readonly size: () => { readonly memory: number; readonly spilled: number; readonly files: number }
}

const filePattern = /^(\d{15})-(\d{10})-(\d+)\.ndjson$/
const lockName = "handover.lock"
/** Directories open in this process (a lock naming our own pid may be stale: containers reuse pids). */
const openHere = new Set<string>()

const writeFile = (path: string, lines: ReadonlyArray<unknown>) => {
  let body = ""
  for (const line of lines) body += JSON.stringify(line) + "\n"
  const tmp = `${path}.tmp`
  const fd = Fs.openSync(tmp, "w", 0o600)
  try {
    Fs.writeFileSync(fd, body, "utf8")
    Fs.fsyncSync(fd)
  } finally {
    Fs.closeSync(fd)
  }
  Fs.renameSync(tmp, path)
}

export const make = Effect.fn("Handover.make")(function*<A>(options: HandoverOptions<A>): Effect.fn.Return<Handover<A>, HandoverFailed, Scope.Scope> {
  const dir = Path.resolve(options.dir)
  const memoryItems = Math.max(1, Math.floor(options.memoryItems))
  const fileItems = Math.max(1, Math.floor(options.fileItems))
  const failed = (message: string) => (cause: unknown) =>
    new HandoverFailed({ path: dir, message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })

  const listed = yield* Effect.try({
    try: () => {
      Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
      if (openHere.has(dir)) throw new Error("already open in this process")
      // One process per directory: two would apply the same files twice.
      takePidLock(Path.join(dir, lockName), (owner) => `in use by process ${owner}; each process needs its own PUBLISH_SPILL_DIR (or DATA_DIR)`)
      openHere.add(dir)
      const found: Array<{ name: string; items: number }> = []
      for (const name of Fs.readdirSync(dir).toSorted()) {
        if (name.endsWith(".tmp")) Fs.rmSync(Path.join(dir, name), { force: true })
        const match = filePattern.exec(name)
        if (match) found.push({ name, items: Number(match[3]) })
      }
      return found
    },
    catch: failed("cannot open the hand-over directory")
  })

  // Wall time, not the Effect clock: the prefix orders this run's files after every earlier
  // process's on disk, which a test clock (restarting at 0 in each test) would not.
  const runStart = String(Date.now()).padStart(15, "0")
  let seq = 0
  const fileName = (n: number, items: number) => `${runStart}-${String(n).padStart(10, "0")}-${items}.ndjson`
  /** Oldest items, in memory. */
  let head: Array<A> = []
  /** The file `head` was read from, deleted once `head` is drained. */
  let headFile: string | undefined
  /** Spill files, oldest first: newer than `head`, older than `tail`. */
  const files = listed
  /** Newest items, in memory, waiting to fill a file. */
  let tail: Array<A> = []

  const spill = (items: ReadonlyArray<A>, n: number) =>
    Effect.try({
      try: () => {
        const name = fileName(n, items.length)
        writeFile(Path.join(dir, name), items)
        return { name, items: items.length }
      },
      catch: failed("cannot spill to disk")
    })

  // At shutdown what is in memory goes to disk, in order: `head` (when not already a file) before every
  // file (it is older, and files only ever come after it), `tail` after them.
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      if (headFile === undefined && head.length > 0) {
        yield* spill(head, 0)
        head = []
      }
      if (tail.length > 0) {
        yield* spill(tail, ++seq)
        tail = []
      }
    }).pipe(
      Effect.catch((error) => Effect.logError("changes not handed over are lost", error)),
      Effect.ensuring(Effect.sync(() => {
        openHere.delete(dir)
        Fs.rmSync(Path.join(dir, lockName), { force: true })
      }))
    )
  )

  const offer = Effect.fnUntraced(function*(item: A) {
    if (headFile === undefined && files.length === 0 && tail.length === 0 && head.length < memoryItems) {
      head.push(item)
      return
    }
    tail.push(item)
    if (tail.length < fileItems) return
    const batch = tail
    const written = yield* spill(batch, ++seq).pipe(
      // Not on disk: the batch stays in memory except the item just offered, which is refused.
      Effect.tapError(() => Effect.sync(() => void batch.pop()))
    )
    files.push(written)
    tail = []
  })

  const peekOne: Effect.Effect<A | undefined, HandoverFailed> = Effect.gen(function*() {
    if (head.length > 0) return head[0]
    // Files in order; one whose items were all unreadable is deleted and the next one read.
    for (let next = files[0]; next !== undefined; next = files[0]) {
      const text = yield* Effect.try({
        try: () => Fs.readFileSync(Path.join(dir, next.name), "utf8"),
        catch: failed(`cannot read ${next.name}`)
      })
      const items: Array<A> = []
      for (const line of text.split("\n")) {
        if (line.length === 0) continue
        const decoded = yield* Effect.try({ try: () => options.decode(JSON.parse(line)), catch: (cause) => cause }).pipe(Effect.result)
        if (decoded._tag === "Success") items.push(decoded.success)
        else yield* Effect.logError("unreadable hand-over item dropped", decoded.failure).pipe(Effect.annotateLogs({ file: next.name }))
      }
      files.shift()
      head = items
      headFile = next.name
      if (items.length > 0) return items[0]
      yield* shiftFile
    }
    if (tail.length > 0) {
      head = tail
      tail = []
      return head[0]
    }
    return undefined
  })

  const shiftFile = Effect.gen(function*() {
    const name = headFile
    if (name === undefined) return
    headFile = undefined
    yield* Effect.try({ try: () => Fs.rmSync(Path.join(dir, name), { force: true }), catch: failed(`cannot delete ${name}`) })
  })

  const peek = (n: number) =>
    Effect.map(peekOne, (first) => (first === undefined ? [] : head.slice(0, Math.max(1, n))))

  const shift = Effect.fnUntraced(function*(n: number) {
    head.splice(0, n)
    if (head.length === 0) yield* shiftFile
  })

  return {
    offer,
    peek,
    shift,
    size: () => ({
      memory: head.length + tail.length,
      spilled: files.reduce((n, f) => n + f.items, 0),
      files: files.length
    })
  } satisfies Handover<A>
})