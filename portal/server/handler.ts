import type { PortalHandler } from "#services/api/PortalServices.ts"
import { createRequestHandler, RouterContextProvider, type ServerBuild } from "react-router"
import { runtimeContext } from "../app/context.ts"

/** The generated declaration types optional fields as `T | undefined`, which exactOptionalPropertyTypes refuses: the one cast. */
const loadBuild = () => import("virtual:react-router/server-build") as unknown as Promise<ServerBuild>

const handler = createRequestHandler(loadBuild, process.env["NODE_ENV"] ?? "production")

/** The portal's Web handler, with the running server's Effect services in React Router's context. */
export const handle: PortalHandler["handle"] = (request, runtime) => {
  const context = new RouterContextProvider()
  context.set(runtimeContext, runtime)
  return handler(request, context)
}
