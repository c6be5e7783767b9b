import { isIP } from "node:net"
import { Agent, buildConnector } from "undici"
import { guardedLookup, isDisallowedAddress, privateAddressError } from "../monitors/AddressGuard.ts"

/**
 * The connection pool for URLs an organization chose (webhooks, chat
 * webhooks): like the monitors' checks, it refuses loopback, private,
 * link-local and metadata addresses, whether the URL names one or its host
 * name resolves to one at send time (DNS may change after the channel was
 * saved). The refusal is a final error (`EPRIVATEADDRESS`), not retried.
 * Operators who deliver to their own network set `NOTIFIER_ALLOW_PRIVATE`.
 */
const rule = "notifications go only to public addresses unless NOTIFIER_ALLOW_PRIVATE is set"

export const guardedAgent = (): Agent => {
  const connect = buildConnector({ lookup: guardedLookup(false, rule) as never })
  return new Agent({
    connect: (options, callback) => {
      const host = options.hostname.replace(/^\[|\]$/g, "")
      const reason = isIP(host) === 0 ? null : isDisallowedAddress(host)
      if (reason !== null) return callback(privateAddressError(host, host, reason, rule), null)
      return connect(options, callback)
    }
  })
}

/** Whether a send error is the guard's refusal. */
export const isPrivateAddressRefusal = (error: unknown): boolean => {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === "EPRIVATEADDRESS") return true
  }
  return false
}
