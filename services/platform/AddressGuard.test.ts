import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { isIP } from "node:net"
import { checkUrlTarget, guardedLookup, isDisallowedAddress, type LookupAll, parseAllowedAddresses, TargetRefused } from "./AddressGuard.ts"

const refused: ReadonlyArray<readonly [string, string]> = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["169.254.1.1", "link_local"],
  ["169.254.169.254", "cloud_metadata"],
  ["100.100.100.200", "cloud_metadata"],
  ["100.64.0.1", "carrier_grade_nat"],
  ["100.127.255.255", "carrier_grade_nat"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "broadcast"],
  ["192.0.2.45", "reserved"],
  ["198.18.0.1", "reserved"],
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["0000:0000:0000:0000:0000:0000:0000:0001", "loopback"],
  ["::0:1", "loopback"],
  ["::", "unspecified"],
  ["0::0", "unspecified"],
  ["fc00::1", "private"],
  ["fd12:3456:789a::1", "private"],
  ["FD00:EC2::254", "cloud_metadata"],
  ["fd00:ec2:0:0::254", "cloud_metadata"],
  ["fe80::1", "link_local"],
  ["FE80::abcd:1%eth0", "link_local"],
  ["febf::1", "link_local"],
  ["fec0::1", "private"],
  ["ff02::1", "multicast"],
  ["ff0e::1", "multicast"],
  // IPv4 inside IPv6: the IPv4 address decides.
  ["::ffff:127.0.0.1", "loopback"],
  ["::FFFF:7F00:1", "loopback"],
  ["0:0:0:0:0:ffff:7f00:0001", "loopback"],
  ["::ffff:10.1.2.3", "private"],
  ["::ffff:169.254.169.254", "cloud_metadata"],
  ["::ffff:0:127.0.0.1", "loopback"],
  ["::127.0.0.1", "loopback"],
  ["::8.8.8.8", "reserved"],
  ["64:ff9b::127.0.0.1", "loopback"],
  ["64:ff9b::a9fe:a9fe", "cloud_metadata"],
  ["64:ff9b:1::1", "private"],
  ["2002:7f00:1::", "loopback"],
  ["2002:c0a8:0101::1", "private"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"],
  ["2001:db8::1", "reserved"],
  ["100::1", "reserved"],
  ["4000::1", "reserved"]
]

const allowed = [
  "8.8.8.8",
  "1.1.1.1",
  "172.15.255.255",
  "172.32.0.0",
  "100.63.255.255",
  "100.128.0.0",
  "192.169.0.1",
  "169.253.255.255",
  "223.255.255.255",
  "11.0.0.1",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "2a00:1450:4001:81c::200e",
  "::ffff:8.8.8.8",
  "::ffff:0808:0808",
  "64:ff9b::808:808",
  "2002:0808:0808::1"
]

describe("isDisallowedAddress", () => {
  it("refuses every special-purpose address, with its kind", () => {
    for (const [ip, reason] of refused) {
      assert.notStrictEqual(isIP(ip), 0, `${ip} should be an address net.isIP accepts`)
      assert.strictEqual(isDisallowedAddress(ip), reason, ip)
    }
  })

  it("allows public unicast addresses, also when spelled inside IPv6", () => {
    for (const ip of allowed) assert.strictEqual(isDisallowedAddress(ip), null, ip)
  })

  it("treats what is not an IP address as reserved", () => {
    assert.strictEqual(isDisallowedAddress("localhost"), "reserved")
    assert.strictEqual(isDisallowedAddress("127.1"), "reserved")
    assert.strictEqual(isDisallowedAddress(""), "reserved")
  })
})

const fixed = (addresses: ReadonlyArray<string>): LookupAll => () =>
  Promise.resolve(addresses.map((address) => ({ address, family: isIP(address) })))

const never: LookupAll = () => Promise.reject(new Error("must not be called"))
const failing: LookupAll = () => Promise.reject(Object.assign(new Error("nope"), { code: "ENOTFOUND" }))
const lookupAsPromise = (allowPrivate: boolean, all: boolean) =>
  new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
    guardedLookup(allowPrivate)("localhost", { all }, (err, address) => resolve({ err, address }))
  )

const refusal = (url: string, allowPrivate: boolean, lookup?: LookupAll) =>
  checkUrlTarget(url, lookup ? { allowPrivate, lookup } : { allowPrivate }).pipe(Effect.flip)

describe("checkUrlTarget", () => {
  it.effect("refuses a host with any private address among its addresses", () =>
    Effect.gen(function*() {
      const e = yield* refusal("https://mixed.example/health", false, fixed(["93.184.216.34", "10.0.0.5"]))
      assert.instanceOf(e, TargetRefused)
      assert.strictEqual(e.reason, "private_address")
      assert.strictEqual(e.address, "10.0.0.5")
      assert.strictEqual(e.address_kind, "private")
      assert.include(e.message, "mixed.example resolves to 10.0.0.5")
    }))

  it.effect("accepts public addresses and returns them all", () =>
    Effect.gen(function*() {
      const addresses = yield* checkUrlTarget("https://ok.example/", {
        allowPrivate: false,
        lookup: fixed(["93.184.216.34", "2606:2800:220:1::1"])
      })
      assert.deepStrictEqual(addresses.map((a) => a.address), ["93.184.216.34", "2606:2800:220:1::1"])
    }))

  it.effect("allowPrivate lets private addresses through", () =>
    Effect.gen(function*() {
      const addresses = yield* checkUrlTarget("http://intranet.example/", { allowPrivate: true, lookup: fixed(["10.0.0.5"]) })
      assert.strictEqual(addresses[0]?.address, "10.0.0.5")
    }))

  it.effect("checks IP literals without a lookup, whatever their URL spelling", () =>
    Effect.gen(function*() {
      for (const url of ["http://127.0.0.1/", "http://0x7f.1/", "http://2130706433/", "http://[::ffff:127.0.0.1]:8080/", "http://[::1]/"]) {
        const e = yield* refusal(url, false, never)
        assert.strictEqual(e.reason, "private_address", url)
        assert.strictEqual(e.address_kind, "loopback", url)
      }
      const e = yield* refusal("http://169.254.169.254/latest/meta-data/", false, never)
      assert.strictEqual(e.address_kind, "cloud_metadata")
      const ok = yield* checkUrlTarget("http://[2606:4700:4700::1111]/", { allowPrivate: false, lookup: never })
      assert.deepStrictEqual(ok, [{ address: "2606:4700:4700::1111", family: 6 }])
    }))

  it.effect("a resolution failure is reason dns with the resolver's code", () =>
    Effect.gen(function*() {
      const e = yield* refusal("https://nothing.example/", false, failing)
      assert.strictEqual(e.reason, "dns")
      assert.include(e.message, "ENOTFOUND")
      const empty = yield* refusal("https://empty.example/", false, fixed([]))
      assert.strictEqual(empty.reason, "dns")
    }))

  it.effect("an unparsable URL is invalid_url", () =>
    Effect.gen(function*() {
      const e = yield* refusal("not a url", false)
      assert.strictEqual(e.reason, "invalid_url")
    }))

  it.effect("uses the system resolver when none is given: localhost is loopback", () =>
    Effect.gen(function*() {
      const e = yield* refusal("http://localhost:1/", false)
      assert.strictEqual(e.reason, "private_address")
      assert.strictEqual(e.address_kind, "loopback")
      const ok = yield* Effect.result(checkUrlTarget("http://localhost:1/", { allowPrivate: true }))
      assert.isTrue(Result.isSuccess(ok))
    }))
})

describe("guardedLookup", () => {
  it("refuses localhost with EPRIVATEADDRESS unless private addresses are allowed, with and without all", async () => {
    for (const all of [false, true]) {
      const denied = await lookupAsPromise(false, all)
      assert.strictEqual(denied.err?.code, "EPRIVATEADDRESS")
      assert.include(denied.err?.message, "localhost resolves to")
      const granted = await lookupAsPromise(true, all)
      assert.isNull(granted.err)
      if (all) assert.isTrue(Array.isArray(granted.address))
      else assert.isString(granted.address)
    }
  })

  it("guards a real connection: the server is not contacted when refused", async () => {
    let hits = 0
    const server = http.createServer((_req, res) => {
      hits++
      res.end("ok")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    const get = (allowPrivate: boolean) =>
      new Promise<number | string>((resolve) => {
        const req = http.get({ host: "localhost", port, family: 4, lookup: guardedLookup(allowPrivate) as never, agent: false }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
      })
    try {
      assert.strictEqual(await get(false), "EPRIVATEADDRESS")
      assert.strictEqual(hits, 0)
      assert.strictEqual(await get(true), 200)
      assert.strictEqual(hits, 1)
    } finally {
      server.close()
    }
  })
})

describe("parseAllowedAddresses (OUTBOUND_ALLOW_ADDRESSES)", () => {
  it("allows an address on any port, or on one port; IPv6 in brackets; refuses what is not an address", () => {
    const allowed = parseAllowedAddresses(["10.0.0.7", " 192.168.1.2:8080 ", "[fd00::7]:443", ""])
    assert.isTrue(allowed.allows("10.0.0.7", 80))
    assert.isTrue(allowed.allows("10.0.0.7", 9000))
    assert.isTrue(allowed.allows("192.168.1.2", 8080))
    assert.isFalse(allowed.allows("192.168.1.2", 80))
    assert.isTrue(allowed.allows("fd00::7", 443))
    assert.isFalse(allowed.allows("127.0.0.1", 80))
    assert.throws(() => parseAllowedAddresses(["intranet.example"]), /is not an IP address or IP:port/)
  })

  it("lets checkUrlTarget accept a listed private address and still refuse the others", () =>
    Effect.gen(function*() {
      const allowAddresses = parseAllowedAddresses(["10.0.0.7:8080"])
      const ok = yield* checkUrlTarget("http://10.0.0.7:8080/status", { allowPrivate: false, allowAddresses })
      assert.deepStrictEqual(ok, [{ address: "10.0.0.7", family: 4 }])
      const other = yield* checkUrlTarget("http://10.0.0.7/status", { allowPrivate: false, allowAddresses }).pipe(Effect.flip)
      assert.strictEqual(other.reason, "private_address")
    }).pipe(Effect.runPromise))
})
