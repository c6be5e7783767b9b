import { describe, expect, it } from "vitest"
import { cpuByPid, cpuUsedBetween } from "./processes.ts"

describe("a group's CPU by pid", () => {
  it("counts what the processes alive at the second reading used since the first, never less than nothing", () => {
    // Pid 1 used 1 s more, pid 2 ended (not counted), pid 3 started and used 1.5 s.
    expect(cpuUsedBetween(new Map([[1, 2], [2, 5]]), new Map([[1, 3], [3, 1.5]]))).toBe(2.5)
    // A pid reused by another process reads less than before: nothing, not a negative figure.
    expect(cpuUsedBetween(new Map([[7, 9]]), new Map([[7, 1]]))).toBe(0)
  })

  it("reads this process among the node processes", () => {
    const mine = cpuByPid("node", (cmdline) => cmdline.includes("vitest") || cmdline.includes("node"))
    expect(mine.has(process.pid)).toBe(true)
  })
})
