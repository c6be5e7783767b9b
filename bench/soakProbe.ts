/**
 * Loaded into the statusgrid process that `statusgrid bench soak` runs
 * (`node --import bench/soakProbe.ts bin/statusgrid.js start --demo`), so that the benchmark measures
 * the process's event-loop delay and memory itself, not only through its /metrics: for each line the
 * benchmark writes on file descriptor 3 (a socket pair), one JSON line back with the event loop's delay
 * since the previous line (perf_hooks, sampled every 20 ms as the metric is, but without those 20 ms:
 * an idle loop reads 0, not 20) and the memory now, and the delay histogram starts over. Without a socket on fd 3 it does nothing. It never keeps the
 * process alive.
 */
import * as Fs from "node:fs"
import * as Net from "node:net"
import { delayMs, eventLoopDelay } from "../services/platform/EventLoopDelay.ts"

/** What the probe answers; milliseconds and MiB. */
export interface ProbeReading {
  readonly delay_p50_ms: number
  readonly delay_p99_ms: number
  readonly delay_max_ms: number
  readonly rss_mb: number
  readonly heap_used_mb: number
  readonly heap_total_mb: number
  readonly external_mb: number
  readonly array_buffers_mb: number
}

const isSocket = (fd: number) => {
  try {
    return Fs.fstatSync(fd).isSocket()
  } catch {
    return false
  }
}

/** Bytes to MiB. */
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)

if (isSocket(3)) {
  const delay = eventLoopDelay()
  delay.enable()
  const channel = new Net.Socket({ fd: 3, readable: true, writable: true })
  channel.on("error", () => channel.destroy())
  channel.on("data", (chunk: Buffer) => {
    for (let n = chunk.toString().split("\n").length - 1; n > 0; n--) {
      const memory = process.memoryUsage()
      const { p50, p99, max } = delayMs(delay)
      const reading: ProbeReading = {
        delay_p50_ms: p50,
        delay_p99_ms: p99,
        delay_max_ms: max,
        rss_mb: mb(memory.rss),
        heap_used_mb: mb(memory.heapUsed),
        heap_total_mb: mb(memory.heapTotal),
        external_mb: mb(memory.external),
        array_buffers_mb: mb(memory.arrayBuffers)
      }
      delay.reset()
      channel.write(`${JSON.stringify(reading)}\n`)
    }
  })
  channel.unref()
}
