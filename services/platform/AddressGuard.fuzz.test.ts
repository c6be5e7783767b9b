import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import ipaddr from "ipaddr.js"
import { type DisallowedReason, isDisallowedAddress } from "./AddressGuard.ts"

/**
 * Issue #19: the address classifier against ipaddr.js as an oracle. `range()` names the special
 * range of an address; `expected` maps the name to our reason, and says where we differ on purpose.
 * Fixed seed, bounded runs.
 */
const runs = { seed: 19, numRuns: 1000 }

type Reason = DisallowedReason | null

/** Cloud metadata endpoints sit inside ranges ipaddr.js knows (link-local, CGN, unique local): we name them apart. */
const metadata = new Set(["169.254.169.254", "100.100.100.200", "fd00:ec2::254"])

const v4Reasons = new Map<string, Reason>([
  ["unspecified", "unspecified"],
  ["broadcast", "broadcast"],
  ["multicast", "multicast"],
  ["linkLocal", "link_local"],
  ["loopback", "loopback"],
  ["carrierGradeNat", "carrier_grade_nat"],
  ["private", "private"],
  ["reserved", "reserved"],
  ["unicast", null],
  // Deliberately allowed: AS112 (192.175.48.0/24, 192.31.196.0/24) and AMT relays (192.52.193.0/24) are
  // public anycast services, "globally reachable" in IANA's special-purpose registry.
  ["as112", null],
  ["amt", null]
])

const expectedV4 = (address: ipaddr.IPv4): Reason => {
  if (metadata.has(address.toString())) return "cloud_metadata"
  const range: string = address.range()
  assert.isTrue(v4Reasons.has(range), `unmapped ipaddr.js IPv4 range ${range}`)
  return v4Reasons.get(range)!
}

const v4Of = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])

const v6Reasons = new Map<string, (parts: ReadonlyArray<number>) => Reason>([
  ["unspecified", () => "unspecified"],
  ["loopback", () => "loopback"],
  ["multicast", () => "multicast"],
  ["linkLocal", () => "link_local"],
  ["uniqueLocal", () => "private"],
  // fec0::/10 is deprecated (RFC 3879) but still routed privately where it lingers.
  ["deprecatedSiteLocal", () => "private"],
  // An address that embeds an IPv4 address reaches it, so the IPv4 address decides where ipaddr.js
  // only names the embedding: IPv4-mapped, SIIT (RFC 6145), NAT64 (RFC 6052), 6to4 and Teredo.
  ["ipv4Mapped", (p) => expectedV4(v4Of(p[6]!, p[7]!))],
  ["rfc6145", (p) => expectedV4(v4Of(p[6]!, p[7]!))],
  // 64:ff9b:1::/48 is NAT64 for local use (RFC 8215): private whatever it embeds.
  ["rfc6052", (p) => (p[2] === 1 ? "private" : expectedV4(v4Of(p[6]!, p[7]!)))],
  ["6to4", (p) => expectedV4(v4Of(p[1]!, p[2]!))],
  // Teredo: the client (last 32 bits, inverted) decides, then the server (bits 32-63).
  ["teredo", (p) => expectedV4(v4Of(p[6]! ^ 0xffff, p[7]! ^ 0xffff)) ?? expectedV4(v4Of(p[2]!, p[3]!))],
  ["discard", () => "reserved"],
  ["benchmarking", () => "reserved"],
  ["reserved", () => "reserved"],
  ["deprecatedOrchid", () => "reserved"],
  ["segmentRouting", () => "reserved"],
  // Deliberately allowed: AMT, AS112, ORCHIDv2 and drone entity tags are "globally reachable" in
  // IANA's special-purpose registry, like the IPv4 AS112 and AMT blocks.
  ["amt", () => null],
  ["as112v6", () => null],
  ["orchid2", () => null],
  ["droneRemoteIdProtocolEntityTags", () => null],
  ["unicast", (p) => {
    // Deliberately refused: IPv4-compatible ::a.b.c.d (deprecated, RFC 4291) is refused when its
    // IPv4 address is, and reserved otherwise; ipaddr.js calls it unicast.
    if (p.slice(0, 6).every((g) => g === 0)) return expectedV4(v4Of(p[6]!, p[7]!)) ?? "reserved"
    // Deliberately refused: only 2000::/3 is allocated as global unicast; ipaddr.js calls
    // everything it does not name unicast.
    return (p[0]! & 0xe000) === 0x2000 ? null : "reserved"
  }]
])

const expectedV6 = (address: ipaddr.IPv6): Reason => {
  if (metadata.has(address.toString())) return "cloud_metadata"
  const range: string = address.range()
  const reason = v6Reasons.get(range)
  assert.isDefined(reason, `unmapped ipaddr.js IPv6 range ${range}`)
  return reason!(address.parts)
}

/**
 * ipaddr.js 2.5.0 reads `::a.b.c.d` (IPv4-compatible) as `::ffff:a.b.c.d` (IPv4-mapped); an IPv6
 * address means its bits, so the oracle gets a dotted tail as two hexadecimal groups.
 */
const hexTail = (text: string): string =>
  text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`)

const expected = (text: string): Reason => {
  const address = ipaddr.parse(text.includes(":") ? hexTail(text) : text)
  return address.kind() === "ipv4" ? expectedV4(address as ipaddr.IPv4) : expectedV6(address as ipaddr.IPv6)
}

// ---- Addresses: uniform ones, and ones inside every special range ----

/** `bits` leading bits of `prefix`, the rest from `random`; for groups of `width` bits. */
const overlay = (prefix: ReadonlyArray<number>, bits: number, random: ReadonlyArray<number>, width: number): Array<number> =>
  random.map((r, i) => {
    const kept = Math.max(0, Math.min(width, bits - width * i))
    const mask = ((1 << width) - 1) ^ ((1 << (width - kept)) - 1)
    return (prefix[i]! & mask) | (r & ~mask & ((1 << width) - 1))
  })

/** Every IPv4 range ipaddr.js names, and the metadata addresses. */
const v4Ranges: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["100.100.100.200", 32], ["127.0.0.0", 8], ["169.254.0.0", 16],
  ["169.254.169.254", 32], ["172.16.0.0", 12], ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.31.196.0", 24], ["192.52.193.0", 24],
  ["192.88.99.0", 24], ["192.168.0.0", 16], ["192.175.48.0", 24], ["198.18.0.0", 15], ["198.51.100.0", 24], ["203.0.113.0", 24],
  ["224.0.0.0", 4], ["240.0.0.0", 4], ["255.255.255.255", 32]
]
const octets = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 })
const v4InRange = fc.tuple(fc.constantFrom(...v4Ranges), octets).map(([[base, bits], random]) =>
  new ipaddr.IPv4(overlay(ipaddr.IPv4.parse(base).octets, bits, random, 8))
)
const v4 = fc.oneof(fc.ipV4().map((s) => ipaddr.IPv4.parse(s)), v4InRange)

/** Every IPv6 range ipaddr.js names, ours (3fff::/20, 2001:1::/32) and the metadata address. */
const v6Ranges: ReadonlyArray<readonly [string, number]> = [
  ["::", 128], ["::1", 128], ["::", 96], ["::ffff:0:0", 96], ["::ffff:0:0:0", 96], ["64:ff9b::", 96], ["64:ff9b:1::", 48], ["100::", 64],
  ["2001::", 23], ["2001::", 32], ["2001:1::", 32], ["2001:2::", 48], ["2001:3::", 32], ["2001:4:112::", 48], ["2001:10::", 28],
  ["2001:20::", 28], ["2001:30::", 28], ["2001:db8::", 32], ["2002::", 16], ["2620:4f:8000::", 48], ["3fff::", 20], ["5f00::", 16],
  ["fc00::", 7], ["fd00:ec2::254", 128], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8], ["2000::", 3], ["::", 0]
]
const groups = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 })
const v6InRange = fc.tuple(fc.constantFrom(...v6Ranges), groups).map(([[base, bits], random]) =>
  new ipaddr.IPv6(overlay(ipaddr.IPv6.parse(base).parts, bits, random, 16))
)
/** An IPv4 address inside an IPv6 one, where the embeddings put it. */
const v6Embedding = fc.tuple(fc.constantFrom("::ffff:0:0", "::", "::ffff:0:0:0", "64:ff9b::", "2002::", "2001::"), v4InRange, groups)
  .map(([base, inner, random]) => {
    const parts = overlay(ipaddr.IPv6.parse(base).parts, base === "2002::" ? 16 : base === "2001::" ? 32 : 96, random, 16)
    const [hi, lo] = [(inner.octets[0]! << 8) | inner.octets[1]!, (inner.octets[2]! << 8) | inner.octets[3]!]
    if (base === "2002::") [parts[1], parts[2]] = [hi, lo]
    else if (base === "2001::") [parts[6], parts[7]] = [hi ^ 0xffff, lo ^ 0xffff]
    else [parts[6], parts[7]] = [hi, lo]
    return new ipaddr.IPv6(parts)
  })

/** An IPv6 address in the spellings a resolver or a URL may give: compressed, full, upper case, dotted tail. */
const spelled = (address: ipaddr.IPv6, style: number): string => {
  const p = address.parts
  switch (style) {
    case 0:
      return address.toString()
    case 1:
      return address.toNormalizedString()
    case 2:
      return address.toString().toUpperCase()
    case 3:
      return `${p.slice(0, 6).map((g) => g.toString(16)).join(":")}:${v4Of(p[6]!, p[7]!).toString()}`
    default:
      return `${address.toString()}%eth0`
  }
}
const v6Text = fc.oneof(
  fc.ipV6(),
  fc.tuple(fc.oneof(v6InRange, v6Embedding), fc.integer({ min: 0, max: 4 })).map(([address, style]) => spelled(address, style))
)

describe("isDisallowedAddress against ipaddr.js (fuzzed)", () => {
  it("IPv4: our reason is ipaddr.js's range, mapped", () => {
    fc.assert(fc.property(v4, (address) => assert.strictEqual(isDisallowedAddress(address.toString()), expected(address.toString()), address.toString())), runs)
  })

  it("IPv4-mapped IPv6 (::ffff:a.b.c.d, and ::ffff:hhhh:hhhh) reads as its IPv4 address", () => {
    fc.assert(
      fc.property(v4, fc.boolean(), (address, dotted) => {
        const mapped = address.toIPv4MappedAddress()
        const text = dotted ? `::ffff:${address.toString()}` : mapped.toString()
        assert.strictEqual(isDisallowedAddress(text), expectedV4(address), text)
        assert.strictEqual(isDisallowedAddress(text), expected(text), text)
      }),
      runs
    )
  })

  it("IPv6: our reason is ipaddr.js's range, mapped", () => {
    fc.assert(fc.property(v6Text, (text) => assert.strictEqual(isDisallowedAddress(text), expected(text.replace(/%.*$/, "")), text)), runs)
  })

  it("anything that is not a plain IP address is refused", () => {
    // Resolvers give canonical addresses; other spellings (0x7f.1, 017700000001, 127.1) are not trusted.
    fc.assert(
      fc.property(fc.oneof(fc.ipV4Extended().filter((s) => !ipaddr.IPv4.isValidFourPartDecimal(s)), fc.string()), (text) => {
        if (ipaddr.isValid(text) && (ipaddr.IPv6.isValid(text) || ipaddr.IPv4.isValidFourPartDecimal(text))) return
        assert.strictEqual(isDisallowedAddress(text), "reserved", text)
      }),
      runs
    )
  })
})

describe("isDisallowedAddress: the ranges the oracle found", () => {
  it("refuses the IPv6 documentation prefix 3fff::/20 and the IETF assignments 2001::/23 but for their global blocks", () => {
    for (const address of ["3fff::1", "3fff:fff:ffff::1", "2001:1::1", "2001:2:1::1", "2001:10::1", "2001:1ff::1", "2001:5::1"]) {
      assert.strictEqual(isDisallowedAddress(address), "reserved", address)
    }
    for (const address of ["3fff:1000::1", "2001:3::1", "2001:4:112::1", "2001:20::1", "2001:3f:ffff::1", "2001:200::1"]) {
      assert.isNull(isDisallowedAddress(address), address)
    }
  })
})
