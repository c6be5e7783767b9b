import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "vitest"
import { freePort } from "../../bench/processes.ts"
import { childEnv, embeddedServers, runCli, type Running } from "../support/process.ts"

const start = embeddedServers()

/** A form posted as a browser would (same origin), without following the answer's redirect. */
const post = (server: Running, path: string, fields: Record<string, string>) =>
  fetch(`${server.url}${path}`, { method: "POST", body: new URLSearchParams(fields), headers: { origin: server.url }, redirect: "manual" })

/** Waits for the next minute when less than `ms` of this one is left: the counts of a minute must not start over under a test. */
const insideOneMinute = async (ms = 20_000) => {
  const left = 60_000 - (Date.now() % 60_000)
  if (left < ms) await new Promise((done) => setTimeout(done, left + 200))
}

/** A public read (`/api/v1/sources`) as a proxy forwarding `forwardedFor` sends it: its status. */
const readAs = (server: Running, forwardedFor: string) =>
  fetch(`${server.url}/api/v1/sources?limit=1`, { headers: { "x-forwarded-for": forwardedFor } }).then(async (r) => {
    await r.arrayBuffer()
    return r.status
  })

/** A crowd report of `key` as a proxy forwarding `forwardedFor` sends it. */
const reportAs = (server: Running, key: string, forwardedFor: string) =>
  fetch(`${server.url}/api/v1/sources/${key}/reports`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor },
    body: JSON.stringify({ symptom: "down" })
  }).then(async (r) => ({ status: r.status, body: await r.json() as { counted?: boolean } }))

/**
 * The session cookie of a sign-up that says it came over https (`X-Forwarded-Proto: https`, as a
 * TLS-ending proxy forwards it) from a page of `origin`: its Set-Cookie header.
 */
const sessionCookieAs = async (server: Running, email: string, origin: "https" | "http") => {
  const { host } = new URL(server.url)
  const signedUp = await fetch(`${server.url}/signup`, {
    method: "POST",
    body: new URLSearchParams({ name: "Someone", email, password: "correct horse battery staple" }),
    headers: { origin: `${origin}://${host}`, "x-forwarded-for": "198.51.100.20", "x-forwarded-proto": "https" },
    redirect: "manual"
  })
  await signedUp.arrayBuffer()
  assert.oneOf(signedUp.status, [302, 303], `sign-up of ${email}`)
  return signedUp.headers.get("set-cookie") ?? ""
}

describe("limits of unauthenticated requests", () => {
  it("per address: public reads and sign-ins each up to their limit a minute, then 429 with Retry-After; other pages are not counted", async () => {
    const server = await start({ ADDRESS_PUBLIC_PER_MINUTE: "5", ADDRESS_SIGNIN_PER_MINUTE: "3", SIGNIN_ATTEMPTS_PER_ACCOUNT: "100" })
    await insideOneMinute()
    for (let i = 0; i < 5; i++) {
      const ok = await fetch(`${server.url}/api/v1/sources?limit=1`)
      await ok.arrayBuffer()
      assert.strictEqual(ok.status, 200, `public read ${i + 1}`)
    }
    const refused = await fetch(`${server.url}/api/v1/sources?limit=1`)
    assert.strictEqual(refused.status, 429)
    const body = await refused.json() as { code: string; message: string; retry_after_s: number }
    assert.strictEqual(body.code, "rate_limited")
    assert.match(body.message, /^too many requests from this address; retry after \d+ s$/u)
    assert.strictEqual(refused.headers.get("retry-after"), String(body.retry_after_s))
    assert.strictEqual(refused.headers.get("x-content-type-options"), "nosniff", "a refusal carries the security headers too")
    // A share link is a public read of the same address: refused too; the catalog page is not counted.
    assert.strictEqual((await fetch(`${server.url}/share/some-token`)).status, 429)
    assert.strictEqual((await fetch(`${server.url}/catalog`)).status, 200)

    for (let i = 0; i < 3; i++) {
      const wrong = await post(server, "/signin", { email: "nobody@example.com", password: "not the password" })
      await wrong.arrayBuffer()
      assert.strictEqual(wrong.status, 401, `sign-in ${i + 1}`)
    }
    const tooMany = await post(server, "/signin", { email: "nobody@example.com", password: "not the password" })
    assert.strictEqual(tooMany.status, 429)
    assert.match(await tooMany.text(), /^too many sign-in attempts from this address; retry after \d+ s/u)
    assert.isNotNull(tooMany.headers.get("retry-after"))
    // Sign-up is counted with sign-in.
    assert.strictEqual((await post(server, "/signup", { name: "A", email: "a@example.com", password: "a long enough password" })).status, 429)
  }, 90_000)

  it("per account: 3 sign-ins of one e-mail address in 15 minutes, then 429 even with the right password; another account signs in", async () => {
    const server = await start({ ADDRESS_SIGNIN_PER_MINUTE: "100", SIGNIN_ATTEMPTS_PER_ACCOUNT: "3" })
    for (const email of ["target@example.com", "other@example.com"]) {
      const signedUp = await post(server, "/signup", { name: "Someone", email, password: "correct horse battery staple" })
      await signedUp.arrayBuffer()
      assert.oneOf(signedUp.status, [302, 303], `sign-up of ${email}`)
    }
    for (let i = 0; i < 3; i++) {
      const wrong = await post(server, "/signin", { email: "Target@Example.com", password: "a wrong guess" })
      await wrong.arrayBuffer()
      assert.strictEqual(wrong.status, 401, `guess ${i + 1}`)
    }
    const locked = await post(server, "/signin", { email: "target@example.com", password: "correct horse battery staple" })
    assert.strictEqual(locked.status, 429)
    assert.include(await locked.text(), "too many sign-in attempts for this account; try again in")
    const retryAfter = Number(locked.headers.get("retry-after"))
    assert.isAtLeast(retryAfter, 1)
    assert.isAtMost(retryAfter, 15 * 60)
    const other = await post(server, "/signin", { email: "other@example.com", password: "correct horse battery staple" })
    await other.arrayBuffer()
    assert.oneOf(other.status, [302, 303])
    assert.include(other.headers.get("set-cookie") ?? "", "sg_session")
  }, 90_000)

  it("behind a trusted proxy (TRUSTED_PROXIES): the limits and crowd reporters count the client it forwards; without one, X-Forwarded-For is not read", async () => {
    // The test's requests come from 127.0.0.1: the proxy.
    const behind = await start({ ADDRESS_PUBLIC_PER_MINUTE: "3", TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1, ::1" })
    await insideOneMinute()
    assert.deepStrictEqual([await readAs(behind, "203.0.113.5"), await readAs(behind, "203.0.113.6")], [200, 200])
    const listed = await fetch(`${behind.url}/api/v1/sources?limit=1`, { headers: { "x-forwarded-for": "198.51.100.9" } })
    const { key } = ((await listed.json()) as { data: Array<{ key: string }> }).data[0]!
    // Two clients are two reporters; the same client again (an entry it wrote itself before its address,
    // and a trusted proxy after it) is the same reporter, counted once.
    assert.deepStrictEqual([
      await reportAs(behind, key, "203.0.113.5"),
      await reportAs(behind, key, "203.0.113.6"),
      await reportAs(behind, key, "6.6.6.6, 203.0.113.5, 10.1.2.3")
    ].map((r) => [r.status, r.body.counted]), [[202, true], [202, true], [202, false]])
    // Each client has its own count of public reads: 203.0.113.5 reaches 3 (one read, the report is not one).
    assert.deepStrictEqual([await readAs(behind, "203.0.113.5"), await readAs(behind, "203.0.113.5"), await readAs(behind, "203.0.113.5")], [200, 200, 429])
    assert.strictEqual(await readAs(behind, "203.0.113.7"), 200)
    // The trusted proxy ended TLS: the session cookie is Secure.
    assert.include(await sessionCookieAs(behind, "https-behind@example.com", "https"), "; Secure")

    // No proxy trusted: every request is the socket's peer, whatever it forwards.
    const direct = await start({ ADDRESS_PUBLIC_PER_MINUTE: "3" })
    await insideOneMinute()
    assert.deepStrictEqual([await readAs(direct, "203.0.113.5"), await readAs(direct, "203.0.113.6"), await readAs(direct, "203.0.113.7")], [200, 200, 200])
    assert.strictEqual(await readAs(direct, "203.0.113.8"), 429)
    // A client's own X-Forwarded-Proto does not make the cookie of a plain-HTTP request Secure.
    const plain = await sessionCookieAs(direct, "https-claimed@example.com", "http")
    assert.include(plain, "sg_session=")
    assert.notInclude(plain, "Secure")
  }, 120_000)

  it("a TRUSTED_PROXIES entry that is not an address or a network stops the start with one line naming it", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-trusted-"))
    const { code, stderr } = await runCli(["start"], childEnv({ TRUSTED_PROXIES: "127.0.0.1, 10.0.0.300/8", DATA_DIR: dataDir, PORT: String(await freePort()) }))
    Fs.rmSync(dataDir, { recursive: true, force: true })
    assert.strictEqual(code, 1)
    assert.include(stderr, 'statusgrid start failed: SourceError: TRUSTED_PROXIES: "10.0.0.300/8" is not a network (CIDR, e.g. 10.0.0.0/8) [ConfigError]')
    assert.notInclude(stderr, "    at ", "no stack trace")
  }, 60_000)
})
