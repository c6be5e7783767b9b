import { describe, expect, it } from "vitest"
import { canonicalAddress, networkOf } from "./Network.ts"

describe("reporters' networks", () => {
  it("an IPv4 address's network is its /24", () => {
    expect(networkOf("203.0.113.77")).toBe("203.0.113.0/24")
    expect(networkOf("203.0.113.1")).toBe(networkOf("203.0.113.254"))
    expect(networkOf("203.0.114.1")).not.toBe(networkOf("203.0.113.1"))
  })

  it("an IPv4-mapped IPv6 address is its IPv4 address, in every spelling", () => {
    for (const mapped of ["::ffff:198.51.100.9", "::FFFF:198.51.100.9", "0:0:0:0:0:ffff:198.51.100.9", "::ffff:c633:6409"]) {
      expect(canonicalAddress(mapped)).toBe("198.51.100.9")
      expect(networkOf(mapped)).toBe("198.51.100.0/24")
    }
  })

  it("an IPv6 address's network is its /48, however it is written", () => {
    expect(networkOf("2001:db8:abcd:12::1")).toBe("2001:db8:abcd::/48")
    expect(networkOf("2001:0DB8:ABCD:0099:0000:0000:0000:0042")).toBe("2001:db8:abcd::/48")
    expect(networkOf("2001:db8:abce::1")).not.toBe(networkOf("2001:db8:abcd::1"))
    expect(networkOf("fe80::1%eth0")).toBe("fe80:0:0::/48")
    expect(canonicalAddress("2001:db8::1")).toBe(canonicalAddress("2001:0db8:0:0:0:0:0:0001"))
    expect(canonicalAddress("64:ff9b::192.0.2.33")).toBe("64:ff9b:0:0:0:0:c000:221")
  })

  it("what is not an address is its own network", () => {
    expect(networkOf("unknown")).toBe("unknown")
    expect(networkOf("1.2.3")).toBe("1.2.3")
  })
})
