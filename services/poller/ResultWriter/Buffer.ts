import type { SpillFile } from "./Spill.ts"

/** Rows accepted together, in acceptance order; `seq` is shared by memory batches and spill files. */
export interface Batch<Row> {
  /** Acceptance order, shared by memory batches and spill files; `flush` waits on it. */
  readonly seq: number
  readonly rows: ReadonlyArray<Row>
}

/** A spill file not yet in ClickHouse. */
export interface Spilled {
  readonly seq: number
  readonly file: SpillFile
}

/** What the flusher does next: insert a memory batch, insert a spill file, or wait (`ms`; forever when undefined). */
export type Job<Row> =
  | { readonly _tag: "Memory"; readonly batch: Batch<Row> }
  | { readonly _tag: "File"; readonly entry: Spilled }
  | { readonly _tag: "Wait"; readonly ms: number | undefined }

/**
 * The accounting of a batching writer (`../ResultWriter.ts`): the open batch, the sealed ones, the one
 * being inserted, the ones being spilled, the spill files, and the row counts. Pure and synchronous (no
 * I/O, no clock: `now` is given), so each call is atomic between the writer's fibers; the writer does
 * the inserts and the disk.
 *
 * Order out: the batch being inserted until it is done, then spill files (oldest first, by name), then
 * sealed batches; the open batch is sealed when full or `flushMs` after its first row.
 */
export class RowBuffer<Row> {
  private seq = 0
  private open: Array<Row> = []
  private openSince = 0
  /** Full (or flushed) batches waiting for the flusher, oldest first. */
  readonly sealed: Array<Batch<Row>> = []
  /** The memory batch the flusher is inserting. */
  inflight: Batch<Row> | undefined
  /** Memory batches a writer is spilling right now (still counted in `buffered`). */
  private readonly spilling = new Set<Batch<Row>>()
  /** Rows in memory, including the batch being inserted and those being spilled. */
  buffered = 0
  /** Spill files not yet in ClickHouse, oldest first (by name). */
  readonly spilled: Array<Spilled>
  spilledRows: number

  private readonly batchRows: number

  constructor(batchRows: number, existing: ReadonlyArray<SpillFile>) {
    this.batchRows = batchRows
    this.spilled = existing.map((file) => ({ seq: this.seq++, file }))
    this.spilledRows = existing.reduce((n, file) => n + file.rows, 0)
  }

  /** A new place in the acceptance order (rows written straight to disk). */
  nextSeq(): number {
    return this.seq++
  }

  /** The place of the last rows accepted: what `flush` waits for. */
  lastSeq(): number {
    return this.seq - 1
  }

  /** Whether `rows` more rows stay within `memoryRows`. */
  fits(rows: number, memoryRows: number): boolean {
    return this.buffered + rows <= memoryRows
  }

  hasOpen(): boolean {
    return this.open.length > 0
  }

  sealOpen(): void {
    if (this.open.length === 0) return
    this.sealed.push({ seq: this.seq++, rows: this.open })
    this.open = []
  }

  /** Appends to the open batch, sealing full ones; `true` when the flusher should wake (a batch sealed, or a first row). */
  append(rows: ReadonlyArray<Row>, now: number): boolean {
    let signal = this.open.length === 0
    for (const row of rows) {
      if (this.open.length === 0) this.openSince = now
      this.open.push(row)
      if (this.open.length >= this.batchRows) {
        this.sealOpen()
        signal = true
      }
    }
    this.buffered += rows.length
    return signal
  }

  /** A spill file to insert, in its place by name. */
  addSpilled(entry: Spilled): void {
    let i = this.spilled.length
    while (i > 0 && this.spilled[i - 1]!.file.name > entry.file.name) i--
    this.spilled.splice(i, 0, entry)
    this.spilledRows += entry.file.rows
  }

  /** A spill file written (or set aside): no longer to insert. */
  removeSpilled(entry: Spilled): void {
    const i = this.spilled.indexOf(entry)
    if (i < 0) return
    this.spilled.splice(i, 1)
    this.spilledRows -= entry.file.rows
  }

  /** A memory batch is being written to disk; it still counts as buffered. */
  spillStarted(batch: Batch<Row>): void {
    this.spilling.add(batch)
  }

  /** Spilled as `file`: out of memory, into the spill files. */
  spillSucceeded(batch: Batch<Row>, file: SpillFile): void {
    this.spilling.delete(batch)
    this.buffered -= batch.rows.length
    this.addSpilled({ seq: batch.seq, file })
  }

  /** Not spilled: back at the head of the sealed batches. */
  spillFailed(batch: Batch<Row>): void {
    this.spilling.delete(batch)
    this.sealed.unshift(batch)
  }

  /** The batch being inserted is in ClickHouse. */
  inflightWritten(): void {
    if (this.inflight === undefined) return
    this.buffered -= this.inflight.rows.length
    this.inflight = undefined
  }

  /** The oldest sealed batch is in ClickHouse. */
  sealedHeadWritten(): void {
    const batch = this.sealed.shift()
    if (batch !== undefined) this.buffered -= batch.rows.length
  }

  /** A batch taken out by `takeAll` could not be kept anywhere. */
  lost(batch: Batch<Row>): void {
    this.buffered -= batch.rows.length
  }

  /** Everything in memory, oldest first, taken out of the queue (still counted in `buffered`). */
  takeAll(): Array<Batch<Row>> {
    this.sealOpen()
    const rest = this.inflight === undefined ? [...this.sealed] : [this.inflight, ...this.sealed]
    this.inflight = undefined
    this.sealed.length = 0
    return rest
  }

  nextJob(now: number, flushMs: number): Job<Row> {
    if (this.inflight !== undefined) return { _tag: "Memory", batch: this.inflight }
    const file = this.spilled[0]
    if (file !== undefined) return { _tag: "File", entry: file }
    if (this.sealed.length === 0 && this.open.length > 0 && now - this.openSince >= flushMs) this.sealOpen()
    const batch = this.sealed.shift()
    if (batch !== undefined) {
      this.inflight = batch
      return { _tag: "Memory", batch }
    }
    return { _tag: "Wait", ms: this.open.length > 0 ? this.openSince + flushMs - now : undefined }
  }

  /** Whether rows accepted up to `target` are still to be written (spill files counted only when `files`). */
  pendingUpTo(target: number, files: boolean): boolean {
    return (this.inflight !== undefined && this.inflight.seq <= target) ||
      (this.sealed[0] !== undefined && this.sealed[0].seq <= target) ||
      [...this.spilling].some((b) => b.seq <= target) ||
      (files && this.spilled.some((s) => s.seq <= target))
  }
}
