import { hostOf } from "../../platform/AddressGuard.ts"

/** Why a check failed, as the outcome's `error_code` and sentence, from node's socket and request errors. */

export type CheckErrorCode =
  | "timeout"
  | "dns"
  | "connect"
  | "tls"
  | "private_address"
  | "status"
  | "keyword"
  | "too_many_redirects"
  | "reset"
  | "protocol"

const dnsCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME", "ENODATA", "ESERVFAIL", "EREFUSED"])
const connectCodes = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "ETIMEDOUT", "EHOSTDOWN", "ENETDOWN"])
/** A connection closed under the request; a kept-alive one is retried once. */
export const resetCodes = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"])
const tlsCode = /^(CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE|PATH_LENGTH|EPROTO$)/

export interface NodeError {
  readonly code?: string
  readonly message: string
  readonly errors?: ReadonlyArray<{ readonly code?: string; readonly message?: string }>
}

/** A socket/request error as the outcome's code and sentence. */
export const classify = (err: NodeError, url: URL): readonly [CheckErrorCode, string] => {
  // Happy eyeballs (autoSelectFamily) reports an AggregateError of the attempts.
  const code = err.code ?? err.errors?.[0]?.code ?? ""
  const host = hostOf(url)
  if (code === "EPRIVATEADDRESS") return ["private_address", err.message]
  if (dnsCodes.has(code)) return ["dns", `could not resolve ${host} (${code})`]
  if (connectCodes.has(code)) return ["connect", `could not connect to ${url.host} (${code})`]
  if (resetCodes.has(code)) return ["reset", `the connection was closed before a complete response (${code})`]
  if (code.startsWith("HPE_") || code.startsWith("ERR_INVALID_") || code.startsWith("ERR_HTTP")) {
    return ["protocol", `invalid HTTP response (${code}: ${err.message})`]
  }
  if (tlsCode.test(code)) return ["tls", `TLS ${code}: ${err.message}`]
  return ["connect", `${code || "error"}: ${err.message}`]
}
