import { Config, ConfigProvider, Effect, Layer, Result } from "effect"
import { HttpMiddleware, HttpRouter } from "effect/http"
import { IpNetwork, NetAddress } from "effect/net"

/**
 * One entry of `TRUSTED_PROXIES`: a network in CIDR notation (`10.0.0.0/8`, `fd00::/8`) or one address
 * (`127.0.0.1`, `::1`), or a line saying what is wrong with it.
 */
const networkOf = (entry: string): Result.Result<IpNetwork.IpNetwork, string> => {
  if (entry.includes("/")) return Result.mapError(IpNetwork.fromString(entry), () => `${JSON.stringify(entry)} is not a network (CIDR, e.g. 10.0.0.0/8)`)
  const notAnAddress = `${JSON.stringify(entry)} is not an IP address or a network (CIDR)`
  return Result.flatMap(
    Result.mapError(NetAddress.ipFromString(entry), () => notAnAddress),
    (address) =>
      Result.mapError(IpNetwork.fromAddress(address, NetAddress.isIpv4Address(address) ? 32 : 128), () => notAnAddress)
  )
}

/**
 * `TRUSTED_PROXIES`: the reverse proxies in front of statusgrid (comma-separated addresses or
 * networks), whose `X-Forwarded-For` names the client. Unset, no proxy is trusted and the client is
 * the socket's peer, whatever a request's headers say.
 */
export const TrustedProxiesConfig: Config.Config<ReadonlyArray<IpNetwork.IpNetwork>> = Config.String("TRUSTED_PROXIES").pipe(
  Config.withDefault(""),
  Config.mapEffect((text) => {
    const networks: Array<IpNetwork.IpNetwork> = []
    for (const entry of text.split(",").map((e) => e.trim()).filter((e) => e !== "")) {
      const network = networkOf(entry)
      if (Result.isFailure(network)) {
        return Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message: `TRUSTED_PROXIES: ${network.failure}` })))
      }
      networks.push(network.success)
    }
    return Effect.succeed(networks)
  })
)

/**
 * The client's address behind trusted proxies (decision 0030): when the socket's peer is one of
 * `TRUSTED_PROXIES`, the request's address becomes the last address of its `X-Forwarded-For` that is
 * not a trusted proxy (Effect's `xForwardedHeaders`, which also takes the host and scheme that proxy
 * forwarded), for every use after it: the limits per address, crowd reporters, API keys' last-used
 * address and the portal's pages. Without trusted proxies nothing is read from the headers.
 */
export const TrustedProxiesLive = Layer.unwrap(Effect.gen(function*() {
  const trustedProxies = yield* TrustedProxiesConfig
  return trustedProxies.length === 0
    ? Layer.empty
    : HttpRouter.middleware(HttpMiddleware.xForwardedHeaders({ trustedProxies }), { global: true })
}))
