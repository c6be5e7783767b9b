/**
 * A min-heap of sources by the time their next check is due. Each key is in
 * the queue at most once; re-adding a key moves it. O(log n) push and pop.
 */
export class DueQueue {
  private readonly heap: Array<{ key: string; due: number }> = []
  private readonly index = new Map<string, number>()

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
    const at = this.index.get(key)
    if (at !== undefined) {
      const old = this.heap[at]!.due
      this.heap[at]!.due = due
      if (due < old) this.up(at)
      else this.down(at)
      return
    }
    this.heap.push({ key, due })
    this.index.set(key, this.heap.length - 1)
    this.up(this.heap.length - 1)
  }

  delete(key: string): void {
    const at = this.index.get(key)
    if (at === undefined) return
    const last = this.heap.pop()!
    this.index.delete(key)
    if (at < this.heap.length) {
      this.heap[at] = last
      this.index.set(last.key, at)
      this.up(at)
      this.down(at)
    }
  }

  /** Removes and returns the earliest entry if it is due at or before `now`. */
  popDue(now: number): { key: string; due: number } | undefined {
    const top = this.heap[0]
    if (!top || top.due > now) return undefined
    this.delete(top.key)
    return top
  }

  private swap(a: number, b: number): void {
    const x = this.heap[a]!
    const y = this.heap[b]!
    this.heap[a] = y
    this.heap[b] = x
    this.index.set(y.key, a)
    this.index.set(x.key, b)
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (this.heap[parent]!.due <= this.heap[i]!.due) return
      this.swap(i, parent)
      i = parent
    }
  }

  private down(i: number): void {
    const n = this.heap.length
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let smallest = i
      if (l < n && this.heap[l]!.due < this.heap[smallest]!.due) smallest = l
      if (r < n && this.heap[r]!.due < this.heap[smallest]!.due) smallest = r
      if (smallest === i) return
      this.swap(i, smallest)
      i = smallest
    }
  }
}
