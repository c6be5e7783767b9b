import type { PortalServices } from "#services/api/PortalServices.ts"
import { Cause, type Effect, Exit } from "effect"
import { data, type RouterContextProvider } from "react-router"
import { runtimeContext } from "../context.ts"

/** What loaders and actions receive as `context`. */
export type PortalContext = Readonly<RouterContextProvider>

const statusOf: Record<string, number> = { SessionExpired: 419, CsrfMismatch: 419, NotFound: 404, Forbidden: 403 }

/**
 * Runs `effect` on the running server's services (its pools, bus, config),
 * cancelled when the browser goes away. A failure tagged SessionExpired or
 * CsrfMismatch is thrown as a 419 (the "page has expired" page), NotFound as
 * 404, Forbidden as 403; anything else goes to the ErrorBoundary as a 500.
 * To show a typed error in a form, handle it inside the effect (`Effect.result`).
 */
export const runEffect = async <A, E>(context: PortalContext, request: Request, effect: Effect.Effect<A, E, PortalServices>): Promise<A> => {
  const exit = await context.get(runtimeContext).run(effect, { signal: request.signal })
  if (Exit.isSuccess(exit)) return exit.value
  const error = Cause.squash(exit.cause)
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : ""
  const status = statusOf[tag]
  if (status !== undefined) {
    const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : tag
    throw data({ message }, { status, statusText: tag })
  }
  throw error
}
