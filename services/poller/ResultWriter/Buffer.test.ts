import { assert, describe, it } from "@effect/vitest"
import { RowBuffer } from "./Buffer.ts"

const file = (name: string, rows: number) => ({ name, rows })

describe("RowBuffer", () => {
  it("seals a batch when full and asks to wake the flusher on a first row or a sealed batch", () => {
    const buf = new RowBuffer<number>(3, [])
    assert.isTrue(buf.append([1], 0))
    assert.isFalse(buf.append([2], 0))
    assert.isTrue(buf.append([3, 4], 0))
    assert.deepStrictEqual(buf.sealed.map((b) => b.rows), [[1, 2, 3]])
    assert.strictEqual(buf.buffered, 4)
    assert.isTrue(buf.hasOpen())
  })

  it("inserts the batch in flight first, then spill files, then sealed batches; the open one after flushMs", () => {
    const buf = new RowBuffer<string>(2, [file("b", 5)])
    assert.strictEqual(buf.spilledRows, 5)
    buf.append(["x", "y", "z"], 100)
    const first = buf.nextJob(100, 50)
    assert.strictEqual(first._tag, "File")
    if (first._tag === "File") buf.removeSpilled(first.entry)
    assert.strictEqual(buf.spilledRows, 0)
    const second = buf.nextJob(100, 50)
    assert.strictEqual(second._tag, "Memory")
    // Until it is written, the batch in flight is handed out again.
    assert.deepStrictEqual(buf.nextJob(100, 50), second)
    buf.inflightWritten()
    assert.strictEqual(buf.buffered, 1)
    // The open row waits for flushMs after it arrived, then goes as its own batch.
    assert.deepStrictEqual(buf.nextJob(120, 50), { _tag: "Wait", ms: 30 })
    const third = buf.nextJob(150, 50)
    assert.strictEqual(third._tag === "Memory" && third.batch.rows.join(), "z")
    buf.inflightWritten()
    assert.strictEqual(buf.buffered, 0)
    assert.deepStrictEqual(buf.nextJob(200, 50), { _tag: "Wait", ms: undefined })
  })

  it("keeps spill files in name order and counts their rows", () => {
    const buf = new RowBuffer<number>(10, [file("a", 1), file("c", 3)])
    buf.addSpilled({ seq: buf.nextSeq(), file: file("b", 2) })
    assert.deepStrictEqual(buf.spilled.map((s) => s.file.name), ["a", "b", "c"])
    assert.strictEqual(buf.spilledRows, 6)
  })

  it("moves a spilled batch from memory to the files, and a failed spill back to the head", () => {
    const buf = new RowBuffer<number>(2, [])
    buf.append([1, 2, 3, 4], 0)
    const [oldest, newer] = buf.sealed.splice(0, 2)
    buf.spillStarted(oldest!)
    buf.spillStarted(newer!)
    // Being spilled still counts in memory, and a flush waits for it.
    assert.strictEqual(buf.buffered, 4)
    assert.isTrue(buf.pendingUpTo(oldest!.seq, true))
    buf.spillSucceeded(oldest!, file("f1", 2))
    buf.spillFailed(newer!)
    assert.strictEqual(buf.buffered, 2)
    assert.strictEqual(buf.spilledRows, 2)
    assert.deepStrictEqual(buf.sealed, [newer])
    // The spill file is pending only while files count (not once the writer is closing).
    assert.isTrue(buf.pendingUpTo(oldest!.seq, true))
    assert.isFalse(buf.pendingUpTo(oldest!.seq, false))
  })

  it("flush waits for what was accepted up to its call, not after", () => {
    const buf = new RowBuffer<number>(10, [])
    buf.append([1], 0)
    buf.sealOpen()
    const target = buf.lastSeq()
    buf.append([2], 0)
    buf.sealOpen()
    assert.isTrue(buf.pendingUpTo(target, true))
    buf.sealedHeadWritten()
    assert.isFalse(buf.pendingUpTo(target, true))
    assert.strictEqual(buf.buffered, 1)
  })

  it("takes everything in memory out at shutdown, the batch in flight first", () => {
    const buf = new RowBuffer<number>(2, [])
    buf.append([1, 2, 3, 4, 5], 0)
    const inflight = buf.nextJob(0, 1000)
    assert.strictEqual(inflight._tag, "Memory")
    const rest = buf.takeAll()
    assert.deepStrictEqual(rest.map((b) => b.rows), [[1, 2], [3, 4], [5]])
    assert.strictEqual(buf.inflight, undefined)
    assert.strictEqual(buf.sealed.length, 0)
    buf.spillSucceeded(rest[0]!, file("s", 2))
    buf.lost(rest[1]!)
    buf.lost(rest[2]!)
    assert.strictEqual(buf.buffered, 0)
    assert.strictEqual(buf.spilledRows, 2)
  })
})
