import { spawn } from "node:child_process"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { providerIds } from "../../services/adapters/registry.ts"
import { syntheticSpecs } from "../../services/catalog/Synthetic.ts"
import { childEnv, freePort, repoRoot, runCli } from "../support/process.ts"

/** `statusgrid simulate` and `statusgrid probe` as a user runs them. */
describe("statusgrid simulate and probe", () => {
  let child: ReturnType<typeof spawn> | undefined
  let url = ""

  beforeAll(async () => {
    const port = await freePort()
    const sim = spawn(process.execPath, ["bin/statusgrid.js", "simulate", "--port", String(port), "--sources", "400"], {
      cwd: repoRoot,
      env: childEnv({}),
      stdio: ["ignore", "pipe", "pipe"]
    })
    child = sim
    url = await new Promise<string>((resolve, reject) => {
      let out = ""
      sim.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString()
        const line = out.split("\n").find((l) => l.includes("simulator is up"))
        if (line) resolve(String((JSON.parse(line) as { annotations: { url: string } }).annotations.url))
      })
      sim.once("exit", (code) => reject(new Error(`simulate exited with ${code}: ${out}`)))
    })
  }, 60_000)
  afterAll(() => {
    child?.kill("SIGTERM")
  })

  it("probe detects and reads a source of every provider type the simulator serves", async () => {
    const specs = syntheticSpecs(400)
    const found: Record<string, string> = {}
    for (const provider of providerIds) {
      const spec = specs.find((s) => s.provider === provider)
      assert.isDefined(spec, `no ${provider} source among the first 400`)
      const result = await runCli(["probe", `${url}/s/${spec!.key}`], childEnv({}))
      assert.strictEqual(result.code, 0, result.stdout + result.stderr)
      const printed = JSON.parse(result.stdout) as { provider: string; snapshot: { status: string; components: Array<unknown> } }
      found[provider] = printed.provider
      assert.strictEqual(printed.snapshot.status, "operational")
    }
    assert.deepStrictEqual(found, Object.fromEntries(providerIds.map((p) => [p, p])))
  }, 120_000)

  it("probe --type reads without detection, and says clearly when the type is wrong", async () => {
    const instatus = syntheticSpecs(400).find((s) => s.provider === "instatus")!
    const ok = await runCli(["probe", "--type", "instatus", `${url}/s/${instatus.key}`], childEnv({}))
    assert.strictEqual(ok.code, 0, ok.stderr)
    assert.strictEqual((JSON.parse(ok.stdout) as { detected_by: string }).detected_by, "flag")
    const wrong = await runCli(["probe", "--type", "statuspage_io", `${url}/s/${instatus.key}`], childEnv({}))
    assert.notStrictEqual(wrong.code, 0)
    // One line: what failed, then what to do (services/cli/report.ts).
    assert.match(wrong.stderr, /^statusgrid probe failed: [^\n]*HTTP 404[^\n]*\[AdapterError\]\. [^\n]+\n?$/)
  }, 60_000)
})
