import type { PortalRuntime } from "#services/api/PortalServices.ts"
import { createContext } from "react-router"

/** The running server's services (services/api/Portal.ts); loaders read it through lib/effect.server.ts. */
export const runtimeContext = createContext<PortalRuntime>()
