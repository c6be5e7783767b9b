import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pidAlive, takePidLock } from "./PidLock.ts"

const lockIn = () => Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "sg-pidlock-")), "x.lock")
const inUse = (owner: number) => `in use by ${owner}`

/** The pid of a process that has exited. */
const deadPid = (): number => {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" })
  return Number(child.stdout)
}

describe("PidLock", () => {
  it("takes a free lock, writing this process's pid", () => {
    const lock = lockIn()
    takePidLock(lock, inUse)
    assert.strictEqual(Fs.readFileSync(lock, "utf8"), String(process.pid))
  })

  it("refuses a lock held by a live process, naming it", () => {
    const lock = lockIn()
    Fs.writeFileSync(lock, String(process.ppid))
    assert.isTrue(pidAlive(process.ppid))
    assert.throws(() => takePidLock(lock, inUse), `in use by ${process.ppid}`)
    assert.strictEqual(Fs.readFileSync(lock, "utf8"), String(process.ppid))
  })

  it("takes over a lock left by a dead process, or one that is not a pid", () => {
    const dead = deadPid()
    assert.isFalse(pidAlive(dead))
    for (const content of [String(dead), "", "0", "garbage"]) {
      const lock = lockIn()
      Fs.writeFileSync(lock, content)
      takePidLock(lock, inUse)
      assert.strictEqual(Fs.readFileSync(lock, "utf8"), String(process.pid))
    }
  })
})
