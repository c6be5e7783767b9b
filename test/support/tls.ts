import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { rootCertificates } from "node:tls"
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from "undici"

/** PEM certificates and keys for local HTTPS test servers, made with the openssl CLI. */
export interface TestCerts {
  readonly dir: string
  /** The test CA: trust it with `makeAgentPool({ ca })`. */
  readonly ca: string
  /** A leaf for localhost and 127.0.0.1 signed by the CA. */
  readonly cert: string
  readonly key: string
  /** A self-signed leaf for localhost and 127.0.0.1 (no CA trusts it). */
  readonly selfSignedCert: string
  readonly selfSignedKey: string
  readonly remove: () => void
}

const openssl = (cwd: string, args: ReadonlyArray<string>) => execFileSync("openssl", args, { cwd, stdio: "pipe" })

// EC keys: generating RSA keys would dominate the test's run time.
const newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
const san = "subjectAltName=DNS:localhost,IP:127.0.0.1"

/** A CA, a CA-signed leaf and a self-signed leaf, the leaves valid for `leafDays` days from now. */
export const makeTestCerts = (leafDays = 5): TestCerts => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "statusgrid-tls-"))
  openssl(dir, [
    "req", "-x509", ...newKey, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
    "-subj", "/O=statusgrid tests/CN=statusgrid test CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
  ])
  openssl(dir, ["req", ...newKey, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=localhost"])
  Fs.writeFileSync(
    Path.join(dir, "leaf.ext"),
    `${san}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`
  )
  openssl(dir, [
    "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
    "-out", "leaf.pem", "-days", String(leafDays), "-extfile", "leaf.ext"
  ])
  openssl(dir, [
    "req", "-x509", ...newKey, "-keyout", "self.key", "-out", "self.pem", "-days", String(leafDays),
    "-subj", "/CN=localhost", "-addext", san
  ])
  const read = (name: string) => Fs.readFileSync(Path.join(dir, name), "utf8")
  return {
    dir,
    ca: read("ca.pem"),
    cert: read("leaf.pem"),
    key: read("leaf.key"),
    selfSignedCert: read("self.pem"),
    selfSignedKey: read("self.key"),
    remove: () => Fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Test certificates for the scope, removed on release, and undici's global
 * dispatcher (which the notifier's senders use: they take no CA from
 * configuration) trusting their CA besides the usual roots; the previous
 * dispatcher is restored on release.
 */
export const trustedTestCerts = Effect.gen(function*() {
  const certs = yield* Effect.acquireRelease(Effect.sync(() => makeTestCerts()), (c) => Effect.sync(c.remove))
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      const previous = getGlobalDispatcher()
      const agent = new Agent({ connect: { ca: [...rootCertificates, certs.ca] } })
      setGlobalDispatcher(agent)
      return { previous, agent }
    }),
    ({ agent, previous }) => Effect.promise(() => (setGlobalDispatcher(previous), agent.close()))
  )
  return certs
})
