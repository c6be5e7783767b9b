/** An entry of the heap: its position is kept on it, so moving it costs no map writes. */
interface Slot {
  readonly key: string
  due: number
  at: number
}

/**
 * A min-heap of sources by the time their next check is due. Each key is in
 * the queue at most once; re-adding a key moves it. O(log n) push and pop; a
 * key's map entry is written only when it enters or leaves the queue.
 */
export class DueQueue {
  private readonly heap: Array<Slot> = []
  private readonly index = new Map<string, Slot>()

  get size(): number {
    return this.heap.length
  }

  has(key: string): boolean {
    return this.index.has(key)
  }

  /** The earliest due time, or undefined when empty. */
  peekDue(): number | undefined {
    return this.heap[0]?.due
  }

  /** Adds `key` due at `due`, or moves it there. */
  set(key: string, due: number): void {
    const slot = this.index.get(key)
    if (slot !== undefined) {
      const old = slot.due
      slot.due = due
      if (due < old) this.up(slot.at)
      else this.down(slot.at)
      return
    }
    const added: Slot = { key, due, at: this.heap.length }
    this.heap.push(added)
    this.index.set(key, added)
    this.up(added.at)
  }

  delete(key: string): void {
    const slot = this.index.get(key)
    if (slot === undefined) return
    this.index.delete(key)
    this.remove(slot)
  }

  /**
   * The earliest entry if it is due at or before `now`, left in the queue: the caller moves it on with
   * `set` (a check rescheduled in place, no map write) or takes it out with `delete`.
   */
  peekDueAt(now: number): { readonly key: string; readonly due: number } | undefined {
    const top = this.heap[0]
    if (!top || top.due > now) return undefined
    return { key: top.key, due: top.due }
  }

  /** Removes and returns the earliest entry if it is due at or before `now`. */
  popDue(now: number): { readonly key: string; readonly due: number } | undefined {
    const top = this.heap[0]
    if (!top || top.due > now) return undefined
    this.index.delete(top.key)
    this.remove(top)
    return top
  }

  private remove(slot: Slot): void {
    const last = this.heap.pop()!
    if (slot.at < this.heap.length) {
      this.place(last, slot.at)
      this.up(last.at)
      this.down(last.at)
    }
  }

  private place(slot: Slot, at: number): void {
    this.heap[at] = slot
    slot.at = at
  }

  private up(i: number): void {
    const slot = this.heap[i]!
    while (i > 0) {
      const parent = (i - 1) >> 1
      const above = this.heap[parent]!
      if (above.due <= slot.due) break
      this.place(above, i)
      i = parent
    }
    this.place(slot, i)
  }

  private down(i: number): void {
    const n = this.heap.length
    const slot = this.heap[i]!
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let smallest = l
      if (l >= n) break
      if (r < n && this.heap[r]!.due < this.heap[l]!.due) smallest = r
      const below = this.heap[smallest]!
      if (below.due >= slot.due) break
      this.place(below, i)
      i = smallest
    }
    this.place(slot, i)
  }
}
