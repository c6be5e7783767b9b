interface Host {
  active: number
  /** Attempts waiting for a slot, first come first served; made when the first one waits. */
  waiting: Array<() => void> | undefined
}

/**
 * At most `limit` attempts in flight per hostname (all ports and schemes together); the others wait
 * their turn in order. A hostname is kept only while an attempt holds or waits for one of its slots,
 * so the map never holds more hosts than there are attempts.
 */
export class HostSlots {
  private readonly hosts = new Map<string, Host>()
  private readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  /** Takes a slot: undefined when one was free, else a promise resolved when one passes to this caller. */
  take(hostname: string): Promise<void> | undefined {
    const host = this.hosts.get(hostname)
    if (host === undefined) {
      this.hosts.set(hostname, { active: 1, waiting: undefined })
      return undefined
    }
    if (host.active < this.limit) {
      host.active++
      return undefined
    }
    const waiting = host.waiting ?? (host.waiting = [])
    return new Promise<void>((resolve) => waiting.push(resolve))
  }

  /** Gives a slot back: to the first caller waiting for one, if any. */
  release(hostname: string): void {
    const host = this.hosts.get(hostname)
    if (host === undefined) return
    const next = host.waiting?.shift()
    if (next !== undefined) return next()
    host.active--
    if (host.active === 0) this.hosts.delete(hostname)
  }

  /** Hostnames with an attempt holding or waiting for a slot. */
  get size(): number {
    return this.hosts.size
  }
}
