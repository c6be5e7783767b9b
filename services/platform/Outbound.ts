import { Config, ConfigProvider, Effect } from "effect"
import { Agent, buildConnector } from "undici"
import { type AllowedAddresses, type Connector, guardConnector, type GuardPolicy, parseAllowedAddresses } from "./AddressGuard.ts"
import { version } from "./Version.ts"

/**
 * The one outbound HTTP path of statusgrid (decision 0009): what every
 * client that leaves the installation shares — the poller (`Upstream`),
 * detection and `statusgrid probe` (`Fetcher`), the notifier's senders and,
 * for its guard and parsers, the monitors' check core.
 *
 * - user agents: `userAgent` (status pages, notifications), `monitorUserAgent`;
 * - `Retry-After` (one parser, `retryAfterMs`), retryable statuses, backoff;
 * - bodies read while streaming and cut at a cap (`readBody`, `decodeBody`);
 * - `outboundAgent`: an undici Agent whose connector applies the address
 *   guard to the address actually connected to, on every connection (so
 *   every redirect hop and every DNS answer) when given a `GuardPolicy`.
 */

export { type AllowedAddresses, checkUrlTarget, type GuardPolicy, isPrivateAddressRefusal, type LookupAll, TargetRefused } from "./AddressGuard.ts"
export { acceptEncoding, BodyError, bodyTooLarge, concatChunks, decodeBody, readBody } from "./Outbound/body.ts"
export { backoffDelayMs, isRetryableStatus, parseHttpDate, retryAfterMs } from "./Outbound/retry.ts"

export const userAgent = `statusgrid/${version} (+https://github.com/statusgrid/statusgrid)`
export const monitorUserAgent = `statusgrid-monitor/${version} (+https://github.com/statusgrid)`

/** What status documents are asked for with. */
export const acceptDocuments = "application/json, application/xml, text/xml, */*;q=0.8"

/** Default time for one request, connect to last body byte (POLL_TIMEOUT_MS for the poller). */
export const defaultTimeoutMs = 10_000

/** Largest status document read (poller and detection): cut while streaming past it. */
export const maxDocumentBytes = 8 * 1024 * 1024

export interface OutboundAgentOptions {
  /** Guard every connection with this policy; absent: the operator's own URLs, unguarded. */
  readonly guard?: GuardPolicy | undefined
  /** undici Agent settings (connections per origin, keep-alive, timeouts). */
  readonly connections?: number
  readonly keepAliveTimeout?: number
  readonly keepAliveMaxTimeout?: number
  readonly connectTimeout?: number
  readonly headersTimeout?: number
  readonly bodyTimeout?: number
}

/**
 * An undici Agent (keep-alive pool per origin) whose connections, when
 * `guard` is given, pass the address guard: the guard's cost is one resolution
 * per new connection, nothing per request.
 */
export const outboundAgent = (options: OutboundAgentOptions = {}): Agent => {
  const { guard, ...agentOptions } = options
  if (guard === undefined || guard.allowPrivate) return new Agent(agentOptions)
  const connect = buildConnector(options.connectTimeout === undefined ? {} : { timeout: options.connectTimeout }) as unknown as Connector
  return new Agent({ ...agentOptions, connect: guardConnector(connect, guard) as never })
}

/**
 * OUTBOUND_ALLOW_ADDRESSES: private addresses (`IP` or `IP:port`,
 * comma-separated) that organization-supplied URLs may reach although private
 * targets are refused, e.g. an intranet status page.
 */
export const AllowAddressesConfig: Config.Config<AllowedAddresses> = Config.String("OUTBOUND_ALLOW_ADDRESSES").pipe(
  Config.withDefault(""),
  Config.mapEffect((text) =>
    Effect.try({
      try: () => parseAllowedAddresses(text.split(",")),
      catch: (error) =>
        new Config.ConfigError(new ConfigProvider.SourceError({ message: `OUTBOUND_ALLOW_ADDRESSES: ${(error as Error).message}` }))
    })
  )
)

/**
 * The guard of organization-supplied status page URLs (custom sources,
 * detection, polling): MONITOR_ALLOW_PRIVATE lifts it, as for monitors;
 * OUTBOUND_ALLOW_ADDRESSES lists exceptions.
 */
export const SourceGuardConfig: Config.Config<GuardPolicy> = Config.all({
  allowPrivate: Config.Boolean("MONITOR_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  allowAddresses: AllowAddressesConfig
}).pipe(Config.map(({ allowPrivate, allowAddresses }) => ({ allowPrivate, allowAddresses, rule: sourcesRule })))

export const sourcesRule = "status pages of organizations are read only at public addresses unless MONITOR_ALLOW_PRIVATE is set"
