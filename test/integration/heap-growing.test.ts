import { assert, describe, it } from "vitest"
import { childEnv, envRefusals, runCli } from "../support/process.ts"

/** `HEAP_GROWING_PERCENT` (README, Configuration), read by bin/statusgrid.js before anything else. */
describe("HEAP_GROWING_PERCENT", () => {
  it("accepts 0 to 300 and refuses anything else in one line, before the command runs", async () => {
    for (const value of ["0", "50", "300"]) {
      const ok = await runCli(["--version"], childEnv({ HEAP_GROWING_PERCENT: value }))
      assert.strictEqual(ok.code, 0, `${value}: ${ok.stderr}`)
      assert.match(ok.stdout, /statusgrid v\d/)
    }
    const { answers, refusals } = await envRefusals("HEAP_GROWING_PERCENT", ["301", "-1", "fifty", "1e2", ""], "a whole number from 0 to 300 (0: V8's own choice)")
    assert.deepStrictEqual(answers, refusals)
  }, 60_000)
})
