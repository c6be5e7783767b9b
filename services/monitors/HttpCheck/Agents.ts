import * as http from "node:http"
import * as https from "node:https"
import { rootCertificates } from "node:tls"
import { guardedLookup } from "../../platform/AddressGuard.ts"

/** The keep-alive agents of the monitors' checks (`../HttpCheck.ts`). */

export interface AgentPoolOptions {
  /** Sockets per origin, in use and free (default 8). */
  readonly maxSockets?: number
  /** Idle keep-alive sockets kept per origin (default 4). */
  readonly maxFreeSockets?: number
  /** Sockets over all origins per agent (default unlimited). */
  readonly maxTotalSockets?: number
  /** Extra trusted CA certificates (PEM), added to the public roots: private CAs and tests. */
  readonly ca?: string | ReadonlyArray<string>
}

/** Keep-alive agents shared by all checks of a process, one per (scheme, tls_verify, allowPrivate). */
export interface AgentPool {
  readonly agent: (protocol: "http:" | "https:", tlsVerify: boolean, allowPrivate: boolean) => http.Agent
  /** Destroys every socket; the pool must not be used afterwards. */
  readonly close: () => void
}

export const makeAgentPool = (options: AgentPoolOptions = {}): AgentPool => {
  const agents = new Map<string, http.Agent>()
  const extraCa = options.ca === undefined ? [] : typeof options.ca === "string" ? [options.ca] : [...options.ca]
  // `ca` replaces the default roots in node: keep the public ones next to the private CA.
  const ca = extraCa.length > 0 ? [...rootCertificates, ...extraCa] : undefined
  const base = {
    keepAlive: true,
    scheduling: "lifo" as const,
    maxSockets: options.maxSockets ?? 8,
    maxFreeSockets: options.maxFreeSockets ?? 4,
    ...(options.maxTotalSockets !== undefined ? { maxTotalSockets: options.maxTotalSockets } : {})
  }
  return {
    agent: (protocol, tlsVerify, allowPrivate) => {
      const key = `${protocol}${tlsVerify ? "v" : "n"}${allowPrivate ? "p" : "g"}`
      let agent = agents.get(key)
      if (agent === undefined) {
        const lookup = guardedLookup(allowPrivate) as unknown as http.AgentOptions["lookup"]
        agent = protocol === "https:"
          ? new https.Agent({ ...base, lookup, rejectUnauthorized: tlsVerify, ...(ca ? { ca } : {}) })
          : new http.Agent({ ...base, lookup })
        agents.set(key, agent)
      }
      return agent
    },
    close: () => {
      for (const agent of agents.values()) agent.destroy()
      agents.clear()
    }
  }
}
