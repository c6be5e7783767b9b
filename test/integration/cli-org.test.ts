import { createHmac } from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { childEnv, freePort, runCli, startService } from "../support/process.ts"

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-org-"))
afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

describe("statusgrid org create", () => {
  it("creates an organization on the embedded stores and prints an Admin key that the started service accepts; its outbox delivers", async () => {
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

    // The test receiver listens on 127.0.0.1, which the notifier refuses unless told otherwise.
    const service = await startService(childEnv({ DATA_DIR: dataDir, PORT: String(await freePort()), NOTIFIER_ALLOW_PRIVATE: "true" }), 120_000)
    try {
      const response = await fetch(`${service.url}/api/v1/organization`, {
        headers: { authorization: `Bearer ${printed.admin_api_key}` }
      })
      assert.strictEqual(response.status, 200)
      const org = (await response.json()) as { id: string; plan: string }
      assert.deepStrictEqual([org.id, org.plan], [printed.organization.id, "pro"])
      const anonymous = await fetch(`${service.url}/api/v1/organization`)
      assert.strictEqual(anonymous.status, 401)

      // The started service delivers from the outbox: a test send reaches a webhook receiver, signed.
      const received: Array<{ signature: string | undefined; body: string }> = []
      const receiver = Http.createServer((req, res) => {
        let body = ""
        req.on("data", (c: Buffer) => (body += c.toString("utf8")))
        req.on("end", () => {
          received.push({ signature: req.headers["x-service-signature"] as string | undefined, body })
          res.writeHead(204).end()
        })
      })
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
      try {
        const headers = { authorization: `Bearer ${printed.admin_api_key}`, "content-type": "application/json" }
        const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
        const channel = (await (await fetch(`${service.url}/api/v1/channels`, {
          method: "POST",
          headers,
          body: JSON.stringify({ type: "webhook", name: "Ops hook", settings: { url: hookUrl } })
        })).json()) as { id: string; signing_secret: string }
        const sent = await fetch(`${service.url}/api/v1/channels/${channel.id}/test`, { method: "POST", headers })
        assert.strictEqual(sent.status, 202)
        const deadline = Date.now() + 15_000
        while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
        assert.strictEqual(received.length, 1)
        assert.strictEqual(received[0]!.signature, createHmac("sha256", channel.signing_secret).update(received[0]!.body).digest("hex"))
        assert.strictEqual(JSON.parse(received[0]!.body).event, "test")
      } finally {
        receiver.closeAllConnections()
        await new Promise((resolve) => receiver.close(resolve))
      }
    } finally {
      assert.strictEqual(await service.stop(), 0)
    }
  }, 180_000)
})
