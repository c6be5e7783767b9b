import { createContext, useContext } from "react"

/**
 * The CSP nonce of the page being rendered on the server (portal/app/entry.server.tsx; the server
 * makes one per page, services/api/SecurityHeaders.ts). In the browser it is undefined: scripts
 * added after hydration are modules loaded from this origin, which the policy allows.
 */
export const NonceContext = createContext<string | undefined>(undefined)

export const useNonce = (): string | undefined => useContext(NonceContext)
