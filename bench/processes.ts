import * as Fs from "node:fs"
import * as Net from "node:net"

/** What the benchmarks read of other processes: free ports, and CPU and memory from Linux's /proc. */

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })

/** USER_HZ: /proc counts CPU time in ticks of 1/100 s on Linux. */
const clockTicks = 100

/** The CPU figures of /proc/<pid>/stat, in seconds; undefined once the process is gone (or not Linux). */
const procStat = (pid: number): { readonly own: number; readonly children: number } | undefined => {
  try {
    // Fields after the command name (which may hold spaces): utime, stime, cutime, cstime are the 12th to 15th.
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return {
      own: (Number(fields[11]) + Number(fields[12])) / clockTicks,
      children: (Number(fields[13]) + Number(fields[14])) / clockTicks
    }
  } catch {
    return undefined
  }
}

/** CPU seconds (user + system, every thread) a process has used so far; 0 once it is gone. */
export const procCpu = (pid: number): number => procStat(pid)?.own ?? 0

/** A memory figure of /proc/<pid>/status in MiB (VmHWM: the peak resident set, VmRSS: the resident set now); 0 once the process is gone. */
const statusMb = (pid: number, field: "VmHWM" | "VmRSS"): number => {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Math.round(Number(match[1]) / 1024) : 0
  } catch {
    return 0
  }
}

/** Peak resident set of a process so far (VmHWM), in MiB; 0 once it is gone. */
export const procPeakRss = (pid: number): number => statusMb(pid, "VmHWM")

/** Resident set of a process now (VmRSS), in MiB; 0 once it is gone. */
export const procRss = (pid: number): number => statusMb(pid, "VmRSS")

/** The processes a process started (every thread's children), from /proc; none once it is gone. */
export const childPids = (pid: number): ReadonlyArray<number> => {
  try {
    return Fs.readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      Fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter((p) => p !== "").map(Number)
    )
  } catch {
    return []
  }
}

/** The command line of a process (arguments joined by spaces); "" once it is gone. */
export const procCmdline = (pid: number): string => {
  try {
    return Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim()
  } catch {
    return ""
  }
}

/** CPU seconds every core of the machine has been busy so far (/proc/stat: all but idle and iowait); 0 if unreadable. */
export const machineBusyCpu = (): number => {
  try {
    const fields = Fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields
    return (user + nice + system + irq + softirq + steal) / clockTicks
  } catch {
    return 0
  }
}

/** The processes named `comm` (as /proc/<pid>/comm holds it: `postgres`, `redis-server`) with their command lines. */
const processesNamed = (comm: string): ReadonlyArray<{ readonly pid: number; readonly cmdline: string }> => {
  let pids: Array<string>
  try {
    pids = Fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))
  } catch {
    return []
  }
  return pids.flatMap((pid) => {
    try {
      if (Fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== comm) return []
      return [{ pid: Number(pid), cmdline: procCmdline(Number(pid)) }]
    } catch {
      return []
    }
  })
}

/**
 * CPU seconds used so far by every process named `comm` whose command line `matches`, children that
 * exited included (their parent's cutime and cstime: a PostgreSQL backend that ended is counted by the
 * postmaster), so that the difference of two readings is what the group used in between.
 */
export const groupCpu = (comm: string, matches: (cmdline: string) => boolean = () => true): number =>
  processesNamed(comm).reduce((sum, p) => {
    if (!matches(p.cmdline)) return sum
    const stat = procStat(p.pid)
    return stat ? sum + stat.own + stat.children : sum
  }, 0)

/**
 * CPU seconds used so far by each process named `comm` whose command line `matches`, by pid (its
 * own, not its ended children's): for a group whose ended members no parent accounts for (one
 * database's PostgreSQL backends), compared reading to reading with `cpuUsedBetween`.
 */
export const cpuByPid = (comm: string, matches: (cmdline: string) => boolean): ReadonlyMap<number, number> =>
  new Map(processesNamed(comm).flatMap((p) => {
    if (!matches(p.cmdline)) return []
    const stat = procStat(p.pid)
    return stat ? [[p.pid, stat.own] as const] : []
  }))

/**
 * CPU seconds the processes of `after` used since `before`: the difference for those in both, all of it
 * for those started meanwhile. Those that ended meanwhile are not counted (never negative).
 */
export const cpuUsedBetween = (before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number => {
  let sum = 0
  for (const [pid, cpu] of after) sum += Math.max(0, cpu - (before.get(pid) ?? 0))
  return sum
}
