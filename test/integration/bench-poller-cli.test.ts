import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, expect, it } from "vitest"
import { childEnv, runCli } from "../support/process.ts"

/**
 * `statusgrid bench poller` as README's table runs it, with no optional flag: 30 sources at 2 s on the
 * embedded stores. (A flag added without a default once made the plain command refuse to start.)
 */
describe("statusgrid bench poller", () => {
  it("runs with its defaults and prints one line of figures: every check stored", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-bench-poller-"))
    try {
      const { code, stdout, stderr } = await runCli(
        ["bench", "poller", "--sources", "30", "--duration", "2", "--interval", "2"],
        childEnv({ DATA_DIR: dataDir })
      )
      assert.strictEqual(code, 0, stderr)
      const line = JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown> & { checks_per_s: number; failures: number }
      expect(line.command).toBe("statusgrid bench poller --sources 30 --duration 2")
      expect(line.checks_per_s).toBeGreaterThan(0)
      expect(line.failures).toBe(0)
      expect(line.result_rows as number).toBeGreaterThanOrEqual(line.checks_since_start as number)
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 180_000)
})
