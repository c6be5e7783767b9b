import * as dns from "node:dns"
import { isIP, type Socket } from "node:net"
import { Effect, Schema } from "effect"

/**
 * The address guard of every outbound request to a URL an organization
 * supplied (monitors, custom sources, webhooks and chat webhooks): without it
 * such a URL could probe the operator's own network (SSRF). Addresses are
 * refused when they are not globally routable unicast, whatever their
 * spelling, unless the installation allows private targets or lists the
 * address in `allowAddresses` (OUTBOUND_ALLOW_ADDRESSES). Decision 0009.
 */
export type DisallowedReason =
  | "loopback"
  | "unspecified"
  | "private"
  | "link_local"
  | "carrier_grade_nat"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "cloud_metadata"

const v4Blocks: ReadonlyArray<readonly [base: number, bits: number, reason: DisallowedReason]> = [
  [ip4(169, 254, 169, 254), 32, "cloud_metadata"],
  [ip4(100, 100, 100, 200), 32, "cloud_metadata"],
  [ip4(255, 255, 255, 255), 32, "broadcast"],
  [ip4(0, 0, 0, 0), 8, "unspecified"],
  [ip4(10, 0, 0, 0), 8, "private"],
  [ip4(100, 64, 0, 0), 10, "carrier_grade_nat"],
  [ip4(127, 0, 0, 0), 8, "loopback"],
  [ip4(169, 254, 0, 0), 16, "link_local"],
  [ip4(172, 16, 0, 0), 12, "private"],
  [ip4(192, 0, 0, 0), 24, "reserved"], // IETF protocol assignments
  [ip4(192, 0, 2, 0), 24, "reserved"], // documentation (TEST-NET-1)
  [ip4(192, 88, 99, 0), 24, "reserved"], // 6to4 relay anycast
  [ip4(192, 168, 0, 0), 16, "private"],
  [ip4(198, 18, 0, 0), 15, "reserved"], // benchmarking
  [ip4(198, 51, 100, 0), 24, "reserved"], // documentation (TEST-NET-2)
  [ip4(203, 0, 113, 0), 24, "reserved"], // documentation (TEST-NET-3)
  [ip4(224, 0, 0, 0), 4, "multicast"],
  [ip4(240, 0, 0, 0), 4, "reserved"]
]

function ip4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0
}

const inBlock = (addr: number, base: number, bits: number): boolean =>
  bits === 0 || (addr >>> (32 - bits)) === (base >>> (32 - bits))

/** Dotted-quad decimal (what `net.isIPv4` accepts) as a 32-bit number. */
const parseV4 = (ip: string): number | undefined => {
  const parts = ip.split(".")
  if (parts.length !== 4) return undefined
  let n = 0
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p)) return undefined
    const v = Number(p)
    if (v > 255) return undefined
    n = n * 256 + v
  }
  return n
}

const v4Reason = (addr: number): DisallowedReason | null => {
  for (const [base, bits, reason] of v4Blocks) if (inBlock(addr, base, bits)) return reason
  return null
}

const groups = (s: string): Array<number> =>
  s === "" ? [] : s.split(":").map((g) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : NaN))

/** An IPv6 address as 8 groups of 16 bits; accepts `::`, an embedded dotted quad and a zone (`%eth0`). */
const parseV6 = (input: string): Array<number> | undefined => {
  let ip = input
  const zone = ip.indexOf("%")
  if (zone >= 0) ip = ip.slice(0, zone)
  const lastColon = ip.lastIndexOf(":")
  if (ip.includes(".", lastColon)) {
    // An embedded dotted quad (::ffff:1.2.3.4) is the last two groups.
    const v4 = parseV4(ip.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    ip = `${ip.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const halves = ip.split("::")
  if (halves.length > 2) return undefined
  const head = groups(halves[0]!)
  const rest = halves.length === 2 ? groups(halves[1]!) : []
  const known = head.length + rest.length
  if (head.some(Number.isNaN) || rest.some(Number.isNaN)) return undefined
  if (halves.length === 1 && known !== 8) return undefined
  if (halves.length === 2 && known > 7) return undefined
  return [...head, ...Array<number>(8 - known).fill(0), ...rest]
}

const v4Of = (hi: number, lo: number): number => ((hi << 16) | lo) >>> 0

/** 2001:g1:g2::/48 is one of the globally reachable blocks inside the IETF protocol assignments 2001::/23. */
const isGlobalIetfAssignment = (g1: number, g2: number): boolean =>
  g1 === 0x3 || (g1 === 0x4 && g2 === 0x112) || (g1 & 0xfff0) === 0x20 || (g1 & 0xfff0) === 0x30

const v6Reason = (g: ReadonlyArray<number>): DisallowedReason | null => {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number]
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0)
  if (zeroTo(8)) return "unspecified"
  if (zeroTo(7) && g7 === 1) return "loopback"
  // IPv4-mapped ::ffff:a.b.c.d and the deprecated IPv4-compatible ::a.b.c.d carry an IPv4 address.
  if (zeroTo(5) && g5 === 0xffff) return v4Reason(v4Of(g6, g7))
  if (zeroTo(6)) return v4Reason(v4Of(g6, g7)) ?? "reserved"
  // SIIT ::ffff:0:a.b.c.d
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return v4Reason(v4Of(g6, g7))
  // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address; 64:ff9b:1::/48 is local use.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return v4Reason(v4Of(g6, g7))
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "private"
  // 6to4 2002:AABB:CCDD::/48 embeds a.b.c.d.
  if (g0 === 0x2002) return v4Reason(v4Of(g1, g2))
  // Teredo 2001:0::/32: the client address is the last 32 bits, inverted.
  if (g0 === 0x2001 && g1 === 0) return v4Reason(v4Of(g6 ^ 0xffff, g7 ^ 0xffff)) ?? v4Reason(v4Of(g2, g3))
  if (g0 === 0xfd00 && g1 === 0x0ec2 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 0x254) {
    return "cloud_metadata"
  }
  if ((g0 & 0xfe00) === 0xfc00) return "private" // unique local fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return "link_local"
  if ((g0 & 0xffc0) === 0xfec0) return "private" // deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return "multicast"
  if (g0 === 0x2001 && g1 === 0x0db8) return "reserved" // documentation
  if (g0 === 0x3fff && g1 < 0x1000) return "reserved" // documentation 3fff::/20 (RFC 9637)
  // IETF protocol assignments 2001::/23 (benchmarking, deprecated ORCHID, anycast services, unassigned) are not
  // globally reachable, but for the blocks IANA lists as such: AMT 2001:3::/32, AS112 2001:4:112::/48,
  // ORCHIDv2 2001:20::/28 and drone entity tags 2001:30::/28.
  if (g0 === 0x2001 && g1 < 0x200 && !isGlobalIetfAssignment(g1, g2)) return "reserved"
  // Everything outside 2000::/3 (global unicast) is unassigned or special-purpose.
  if ((g0 & 0xe000) !== 0x2000) return "reserved"
  return null
}

/**
 * Why a monitor may not connect to this IP address, or null when it may.
 * Not an IP address at all counts as "reserved" (callers pass resolved addresses).
 */
export const isDisallowedAddress = (ip: string): DisallowedReason | null => {
  const family = isIP(ip)
  if (family === 4) {
    const n = parseV4(ip)
    return n === undefined ? "reserved" : v4Reason(n)
  }
  if (family === 6) {
    const groups = parseV6(ip)
    return groups === undefined ? "reserved" : v6Reason(groups)
  }
  return "reserved"
}

/** The host of a URL as the resolver wants it: IPv6 literals without brackets. */
export const hostOf = (url: URL): string =>
  url.hostname.startsWith("[") && url.hostname.endsWith("]") ? url.hostname.slice(1, -1) : url.hostname

export class TargetRefused extends Schema.TaggedError<TargetRefused>()("TargetRefused", {
  reason: Schema.Literals(["private_address", "dns", "invalid_url"]),
  host: Schema.String,
  address: Schema.optional(Schema.String),
  address_kind: Schema.optional(Schema.String),
  message: Schema.String
}) {}

export interface LookupAddress {
  readonly address: string
  readonly family: number
}

export type LookupAll = (host: string) => Promise<ReadonlyArray<LookupAddress>>

const systemLookupAll: LookupAll = (host) => dns.promises.lookup(host, { all: true })

const monitorsRule = "monitors may only check public addresses"

const privateMessage = (host: string, address: string, reason: DisallowedReason, rule = monitorsRule): string =>
  host === address
    ? `${address} is a ${reason.replace(/_/g, " ")} address; ${rule}`
    : `${host} resolves to ${address}, a ${reason.replace(/_/g, " ")} address; ${rule}`

/**
 * Private addresses an installation lets organization-supplied URLs reach
 * anyway (OUTBOUND_ALLOW_ADDRESSES): `10.0.0.7` (any port) or `10.0.0.7:8080`,
 * IPv6 as `[fd00::7]:8080`. Parsed once; `allows` is a set lookup.
 */
export interface AllowedAddresses {
  readonly allows: (address: string, port: number) => boolean
}

export const noAllowedAddresses: AllowedAddresses = { allows: () => false }

export const parseAllowedAddresses = (entries: ReadonlyArray<string>): AllowedAddresses => {
  const exact = new Set<string>()
  for (const raw of entries) {
    const entry = raw.trim()
    if (entry === "") continue
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry)
    const v4 = /^([0-9.]+)(?::(\d+))?$/.exec(entry)
    const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [entry, undefined]
    if (isIP(address) === 0) throw new Error(`${JSON.stringify(raw)} is not an IP address or IP:port`)
    exact.add(port === undefined ? address : `${address}|${Number(port)}`)
  }
  if (exact.size === 0) return noAllowedAddresses
  return { allows: (address, port) => exact.has(address) || exact.has(`${address}|${port}`) }
}

/** What decides whether an organization-supplied URL may be reached. */
export interface GuardPolicy {
  /** Private targets allowed (MONITOR_ALLOW_PRIVATE, NOTIFIER_ALLOW_PRIVATE): the guard is off. */
  readonly allowPrivate: boolean
  /** Private addresses allowed all the same (OUTBOUND_ALLOW_ADDRESSES). */
  readonly allowAddresses?: AllowedAddresses
  /** The resolver (tests inject a stub); default `dns.lookup` with every address. */
  readonly lookup?: LookupAll
  /** The end of a refusal's sentence: what is allowed, and which setting lifts it. */
  readonly rule?: string
}

/** The port a URL connects to. */
export const portOf = (url: URL): number => url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80

/** Why `address` may not be connected to on `port` under `policy`, or null when it may. */
const refusedReason = (address: string, port: number, policy: GuardPolicy): DisallowedReason | null => {
  if (policy.allowPrivate) return null
  const reason = isDisallowedAddress(address)
  return reason !== null && policy.allowAddresses?.allows(address, port) === true ? null : reason
}

/**
 * Resolves the URL's host (every address) and refuses it when any address is
 * disallowed, unless `allowPrivate`. Used when a monitor or custom source is
 * created or its URL changes; the guarded connectors repeat the check on
 * every connection.
 */
export const checkUrlTarget = Effect.fnUntraced(function*(
  url: string,
  options: GuardPolicy
): Effect.fn.Return<ReadonlyArray<LookupAddress>, TargetRefused> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return yield* new TargetRefused({ reason: "invalid_url", host: "", message: "is not a valid URL" })
  }
  const host = hostOf(parsed)
  const family = isIP(host)
  const lookup = options.lookup ?? systemLookupAll
  const addresses: ReadonlyArray<LookupAddress> = family !== 0
    ? [{ address: host, family }]
    : yield* Effect.tryPromise({
      try: () => lookup(host),
      catch: (e) =>
        new TargetRefused({
          reason: "dns",
          host,
          message: `${host} could not be resolved (${(e as NodeJS.ErrnoException).code ?? String(e)})`
        })
    })
  if (addresses.length === 0) {
    return yield* new TargetRefused({ reason: "dns", host, message: `${host} has no address` })
  }
  const port = portOf(parsed)
  for (const a of addresses) {
    const reason = refusedReason(a.address, port, options)
    if (reason !== null) {
      return yield* new TargetRefused({
        reason: "private_address",
        host,
        address: a.address,
        address_kind: reason,
        message: privateMessage(host, a.address, reason, options.rule)
      })
    }
  }
  return addresses
})

/** The error a guarded lookup reports; `code` is what the HTTP check maps to `private_address`. */
export interface PrivateAddressError extends NodeJS.ErrnoException {
  readonly code: "EPRIVATEADDRESS"
  readonly hostname: string
  readonly address: string
  readonly reason: DisallowedReason
}

export const privateAddressError = (host: string, address: string, reason: DisallowedReason, rule = monitorsRule): PrivateAddressError =>
  Object.assign(new Error(privateMessage(host, address, reason, rule)), {
    code: "EPRIVATEADDRESS" as const,
    hostname: host,
    address,
    reason
  })

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | Array<dns.LookupAddress>, family?: number) => void

/** The `lookup` option of `http.request`/`net.connect`/an `Agent`: `dns.lookup`'s signature, with or without `all`. */
export type GuardedLookup = (hostname: string, options: dns.LookupOptions | number | LookupCallback, callback?: LookupCallback) => void

/**
 * A `dns.lookup` replacement that resolves every address and refuses the
 * connection when any is disallowed (error code `EPRIVATEADDRESS`), so a
 * monitor whose DNS changed after creation still cannot reach a private
 * address. With `allowPrivate` it is `dns.lookup` itself.
 */
export const guardedLookup = (allowPrivate: boolean, rule = monitorsRule): GuardedLookup => {
  if (allowPrivate) return dns.lookup as unknown as GuardedLookup
  return (hostname, options, callback) => {
    const cb = (typeof options === "function" ? options : callback) as LookupCallback
    const opts: dns.LookupOptions = typeof options === "number" ? { family: options } : typeof options === "function" ? {} : options
    dns.lookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return cb(err, [])
      for (const a of addresses) {
        const reason = isDisallowedAddress(a.address)
        if (reason !== null) return cb(privateAddressError(hostname, a.address, reason, rule), [])
      }
      if (opts.all) return cb(null, addresses)
      const first = addresses[0]
      if (!first) return cb(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), [])
      cb(null, first.address, first.family)
    })
  }
}

/** The connection an undici connector is asked for (a subset of `buildConnector.Options`). */
export interface ConnectRequest {
  readonly hostname: string
  readonly host?: string
  readonly protocol: string
  readonly port: string
  readonly servername?: string
  readonly [key: string]: unknown
}

export type ConnectCallback = (...args: [null, Socket] | [Error, null]) => void
export type Connector = (options: ConnectRequest, callback: ConnectCallback) => void

/**
 * Wraps an undici connector so that the address actually connected to is
 * the address checked: the host is resolved here (every address), refused
 * when any address is disallowed, and the socket opened to the checked IP
 * itself (the name still goes out as TLS SNI and in the Host header). Applied
 * to every new connection, so every redirect hop and every DNS answer is
 * checked; a refusal is an `EPRIVATEADDRESS` error.
 */
const unreachable = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "UND_ERR_CONNECT_TIMEOUT"])

export const guardConnector = (connect: Connector, policy: GuardPolicy): Connector => {
  if (policy.allowPrivate) return connect
  const lookup = policy.lookup ?? systemLookupAll
  return (options, callback) => {
    const host = options.hostname.startsWith("[") ? options.hostname.slice(1, -1) : options.hostname
    const port = options.port !== "" ? Number(options.port) : options.protocol === "https:" ? 443 : 80
    const use = (addresses: ReadonlyArray<LookupAddress>) => {
      for (const a of addresses) {
        const reason = refusedReason(a.address, port, policy)
        if (reason !== null) return callback(privateAddressError(host, a.address, reason, policy.rule), null)
      }
      if (addresses.length === 0) {
        return callback(Object.assign(new Error(`${host} has no address`), { code: "ENOTFOUND" }), null)
      }
      // An IP literal as hostname: net.connect does no lookup of its own. SNI keeps the name (undici derives it from `host`).
      const servername = options.servername ?? (isIP(host) === 0 ? host : undefined)
      // IPv4 first, then the first IPv6 address when the IPv4 one cannot be reached (a host without IPv6 routes, or the reverse).
      const candidates = [addresses.find((a) => a.family === 4), addresses.find((a) => a.family === 6)]
        .filter((a): a is LookupAddress => a !== undefined)
      const attempt = (i: number) =>
        connect({ ...options, hostname: candidates[i]!.address, ...(servername !== undefined ? { servername } : {}) }, (...result) => {
          const [error] = result
          if (error !== null && i + 1 < candidates.length && unreachable.has((error as { code?: string }).code ?? "")) return attempt(i + 1)
          callback(...result)
        })
      attempt(0)
    }
    if (isIP(host) !== 0) return use([{ address: host, family: isIP(host) }])
    lookup(host).then(use, (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null))
  }
}

/** Whether an error (or one of its causes) is the guard's refusal: final, never worth a retry. */
export const isPrivateAddressRefusal = (error: unknown): boolean => {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === "EPRIVATEADDRESS") return true
  }
  return false
}
