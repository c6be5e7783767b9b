import { isIPv4, isIPv6 } from "node:net"

/**
 * An address as one canonical text, so that one client is one reporter however its address was
 * written: an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, what a dual-stack socket reports) is its
 * IPv4 address, IPv6 is lower-case in full (8 groups, no `::`, no zone), anything else is kept
 * trimmed (it is only ever hashed).
 */
export const canonicalAddress = (address: string): string => {
  const trimmed = address.trim().toLowerCase()
  if (isIPv4(trimmed)) return trimmed
  const groups = ipv6Groups(trimmed)
  if (groups === undefined) return trimmed
  // ::ffff:a.b.c.d (IPv4-mapped): the IPv4 address itself.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".")
  }
  return groups.map((g) => g.toString(16)).join(":")
}

/**
 * The network an address belongs to, as text: an IPv4 address's /24 (`1.2.3.0/24`), an IPv6
 * address's /48 (`2001:db8:1::/48`, a site's usual allocation); an IPv4-mapped IPv6 address is its
 * IPv4 network. What is not an IP address is its own network.
 */
export const networkOf = (address: string): string => {
  const canonical = canonicalAddress(address)
  if (isIPv4(canonical)) return `${canonical.split(".").slice(0, 3).join(".")}.0/24`
  const groups = ipv6Groups(canonical)
  if (groups === undefined) return canonical
  return `${groups.slice(0, 3).map((g) => g.toString(16)).join(":")}::/48`
}

/** The groups of one side of `::`, as numbers. */
const parseGroups = (part: string) => part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16))

/** The eight 16-bit groups of an IPv6 address (a zone `%eth0` dropped, an IPv4 tail converted), or undefined. */
const ipv6Groups = (address: string): Array<number> | undefined => {
  const text = address.replace(/%.*$/u, "")
  if (!isIPv6(text)) return undefined
  let body = text
  const tail: Array<number> = []
  const lastColon = body.lastIndexOf(":")
  const last = body.slice(lastColon + 1)
  if (isIPv4(last)) {
    const [a, b, c, d] = last.split(".").map(Number) as [number, number, number, number]
    tail.push((a << 8) | b, (c << 8) | d)
    body = `${body.slice(0, lastColon + 1)}0`
    // "::1.2.3.4" became "::0": the placeholder group is replaced by the two IPv4 groups below.
  }
  const [head = "", rest] = body.split("::") as [string, string | undefined]
  const left = parseGroups(head)
  const right = rest === undefined ? [] : parseGroups(rest)
  if (tail.length > 0) (rest === undefined ? left : right).pop()
  const fill = rest === undefined ? 0 : 8 - tail.length - left.length - right.length
  const groups = [...left, ...Array.from({ length: fill }, () => 0), ...right, ...tail]
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined
}
