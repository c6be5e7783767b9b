import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { childEnv, freePort, runCli, startService } from "../support/process.ts"

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-org-"))
afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

describe("statusgrid org create", () => {
  it("creates an organization on the embedded stores and prints an Admin key that the started service accepts", async () => {
    const env = childEnv({ DATA_DIR: dataDir })
    const created = await runCli(["org", "create", "--name", "Acme Inc", "--slug", "acme", "--plan", "pro"], env)
    assert.strictEqual(created.code, 0, created.stderr)
    const printed = JSON.parse(created.stdout.trim().split("\n").at(-1)!) as {
      organization: { id: string; slug: string; plan: string }
      admin_api_key: string
    }
    assert.strictEqual(printed.organization.slug, "acme")
    assert.match(printed.admin_api_key, /^sg_/)

    const again = await runCli(["org", "create", "--name", "Other", "--slug", "acme"], env)
    assert.notStrictEqual(again.code, 0)
    assert.include(again.stdout + again.stderr, "the slug acme is taken")

    const service = await startService(childEnv({ DATA_DIR: dataDir, PORT: String(await freePort()) }), 120_000)
    try {
      const response = await fetch(`${service.url}/api/v1/organization`, {
        headers: { authorization: `Bearer ${printed.admin_api_key}` }
      })
      assert.strictEqual(response.status, 200)
      const org = (await response.json()) as { id: string; plan: string }
      assert.deepStrictEqual([org.id, org.plan], [printed.organization.id, "pro"])
      const anonymous = await fetch(`${service.url}/api/v1/organization`)
      assert.strictEqual(anonymous.status, 401)
    } finally {
      assert.strictEqual(await service.stop(), 0)
    }
  }, 180_000)
})
