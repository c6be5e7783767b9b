import type { Agent } from "undici"
import type { AllowedAddresses } from "../platform/AddressGuard.ts"
import { outboundAgent } from "../platform/Outbound.ts"

export { isPrivateAddressRefusal } from "../platform/AddressGuard.ts"

/**
 * The connection pool for URLs an organization chose (webhooks, chat
 * webhooks): the outbound module's guarded agent (services/platform/Outbound.ts),
 * which refuses loopback, private, link-local and metadata addresses on every
 * connection, whether the URL names one or its host name resolves to one at
 * send time (DNS may change after the channel was saved). The refusal is a
 * final error (`EPRIVATEADDRESS`), not retried. Operators who deliver to
 * their own network set `NOTIFIER_ALLOW_PRIVATE` (or list addresses in
 * OUTBOUND_ALLOW_ADDRESSES).
 */
const rule = "notifications go only to public addresses unless NOTIFIER_ALLOW_PRIVATE is set"

export const guardedAgent = (allowAddresses?: AllowedAddresses): Agent =>
  outboundAgent({ guard: { allowPrivate: false, rule, ...(allowAddresses ? { allowAddresses } : {}) } })
