import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "vitest"
import { childEnv, envRefusals, runCli } from "../support/process.ts"

/**
 * `HEAP_SEMI_SPACE_MB` (README, Configuration; decision 0027): bin/statusgrid.js re-executes the process
 * with `--max-semi-space-size`. A preload prints, for each image the process runs, its pid and that flag,
 * so the test sees the re-execution itself.
 */
const preload = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-semi-")), "report.mjs")
Fs.writeFileSync(preload, `process.stderr.write("image " + JSON.stringify({ pid: process.pid, flags: process.execArgv.filter((a) => a.startsWith("--max-semi")) }) + "\\n")
`)

const images = (stderr: string) =>
  stderr.split("\n").filter((l) => l.startsWith("image ")).map((l) => JSON.parse(l.slice(6)) as { pid: number; flags: Array<string> })

const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  runCli(args, childEnv({ NODE_OPTIONS: `--import ${preload}`, ...env }))

describe("HEAP_SEMI_SPACE_MB", () => {
  it("re-executes the same process with the flag: 64 MB for runner by default, any command when set, none when 0", async () => {
    // `runner --help` runs bin/statusgrid.js as a runner does, without its servers.
    const runner = await run(["runner", "--help"], {})
    assert.strictEqual(runner.code, 0, runner.stderr)
    const [before, after] = images(runner.stderr)
    assert.deepStrictEqual(before?.flags, [])
    assert.deepStrictEqual(after?.flags, ["--max-semi-space-size=64"])
    assert.strictEqual(after?.pid, before?.pid, "the same process, replaced")

    const set = await run(["--version"], { HEAP_SEMI_SPACE_MB: "48" })
    assert.strictEqual(set.code, 0, set.stderr)
    assert.match(set.stdout, /statusgrid v\d/)
    assert.deepStrictEqual(images(set.stderr).map((i) => i.flags), [[], ["--max-semi-space-size=48"]])

    // Other commands keep V8's own; 0 turns it off for runner; a flag already given is kept as it is.
    assert.deepStrictEqual(images((await run(["--version"], {})).stderr).map((i) => i.flags), [[]])
    assert.deepStrictEqual(images((await run(["runner", "--help"], { HEAP_SEMI_SPACE_MB: "0" })).stderr).map((i) => i.flags), [[]])
    const given = await run(["runner", "--help"], { NODE_OPTIONS: `--import ${preload} --max-semi-space-size=16` })
    assert.strictEqual(given.code, 0, given.stderr)
    assert.strictEqual(images(given.stderr).length, 1)
  }, 60_000)

  it("refuses anything but a whole number from 0 to 1024 in one line, before the command runs", async () => {
    const { answers, refusals } = await envRefusals("HEAP_SEMI_SPACE_MB", ["1025", "-1", "big", "6.4", ""], "a whole number from 0 to 1024 (0: V8's own choice)")
    assert.deepStrictEqual(answers, refusals)
  }, 60_000)
})
