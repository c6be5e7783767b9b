import * as Fs from "node:fs"

/**
 * One process per directory, through a lock file that holds the owner's pid:
 * the data directory (embedded stores), the result writer's spill directory
 * and the publisher's hand-over directory each take one.
 */

/** Whether a process with this pid runs (EPERM: it does, under another user). */
export const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Takes `lock` for this process. A lock left by a dead process (or naming
 * this process, e.g. after a crash) is taken over; a live owner makes it
 * throw an Error with `inUse(owner)` as its message.
 */
export const takePidLock = (lock: string, inUse: (owner: number) => string): void => {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      Fs.writeFileSync(lock, String(process.pid), { flag: "wx", mode: 0o600 })
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const owner = Number(Fs.readFileSync(lock, "utf8").trim())
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && pidAlive(owner)) {
        throw new Error(inUse(owner), { cause: error })
      }
      Fs.rmSync(lock, { force: true })
    }
  }
  throw new Error(`could not take the lock ${lock}`)
}
