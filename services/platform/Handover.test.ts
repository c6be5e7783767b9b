import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Handover from "./Handover.ts"

const decode = Schema.decodeUnknownSync(Schema.Number)

/** Takes every item out, in order, as a drain would. */
const drain = (queue: Handover.Handover<number>) =>
  Effect.gen(function*() {
    const out: Array<number> = []
    for (let items = yield* queue.peek(3); items.length > 0; items = yield* queue.peek(3)) {
      out.push(...items)
      yield* queue.shift(items.length)
    }
    return out
  })

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-handover-"))

describe("Handover", () => {
  it.effect("keeps order across memory, spill files and the newest items; deletes files once drained", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      try {
        const out = yield* Effect.scoped(Effect.gen(function*() {
          const queue = yield* Handover.make({ dir, memoryItems: 10, fileItems: 4, decode })
          for (let i = 0; i < 25; i++) yield* queue.offer(i)
          // 10 in memory, 12 in 3 files, 3 waiting to fill a file.
          assert.deepStrictEqual(queue.size(), { memory: 13, spilled: 12, files: 3 })
          const [first] = yield* queue.peek(1)
          yield* queue.shift(1)
          // Items offered while files wait go behind them.
          yield* queue.offer(25)
          return [first!, ...(yield* drain(queue))]
        }))
        assert.deepStrictEqual(out, Array.from({ length: 26 }, (_, i) => i))
        assert.deepStrictEqual(Fs.readdirSync(dir).filter((f) => f.endsWith(".ndjson")), [])
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }))

  it.effect("spills what is left at shutdown and hands it over first, in order, on the next start", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      try {
        yield* Effect.scoped(Effect.gen(function*() {
          const queue = yield* Handover.make({ dir, memoryItems: 5, fileItems: 3, decode })
          for (let i = 0; i < 12; i++) yield* queue.offer(i)
          yield* queue.peek(1)
          yield* queue.shift(1)
        }))
        const out = yield* Effect.scoped(Effect.gen(function*() {
          const queue = yield* Handover.make({ dir, memoryItems: 5, fileItems: 3, decode })
          yield* queue.offer(100)
          return yield* drain(queue)
        }))
        assert.deepStrictEqual(out, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 100])
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }))

  it.effect("refuses an item it can keep neither in memory nor on disk, and keeps the others", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      try {
        yield* Effect.scoped(Effect.gen(function*() {
          const queue = yield* Handover.make({ dir, memoryItems: 2, fileItems: 2, decode })
          yield* queue.offer(0)
          yield* queue.offer(1)
          yield* queue.offer(2)
          // The directory gone (a full or failed disk): the file cannot be written.
          Fs.rmSync(dir, { recursive: true, force: true })
          const refused = yield* queue.offer(3).pipe(Effect.flip)
          Fs.mkdirSync(dir)
          assert.strictEqual(refused._tag, "HandoverFailed")
          yield* queue.offer(4)
          assert.deepStrictEqual(yield* drain(queue), [0, 1, 2, 4])
        }))
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }))
})
