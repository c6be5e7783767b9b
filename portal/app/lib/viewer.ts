import { isRouteErrorResponse, useRouteError, useRouteLoaderData } from "react-router"

/** What the header and every form's CSRF field know of the signed-in person (never the session token). */
export interface HeaderViewer {
  readonly name: string
  readonly email: string
  readonly csrf: string
  readonly organizations: ReadonlyArray<{ readonly slug: string; readonly name: string }>
}

const isHeaderViewer = (value: unknown): value is HeaderViewer =>
  typeof value === "object" && value !== null && typeof (value as HeaderViewer).name === "string" &&
  typeof (value as HeaderViewer).csrf === "string" && Array.isArray((value as HeaderViewer).organizations)

/**
 * The signed-in person for the header: the root loader's, or, on an error page
 * whose root loader did not run (an action's error reaches the root
 * ErrorBoundary before any loader), the one the error carries (the 419 of a
 * stale form while the session is valid, lib/session.server.ts requireCsrf).
 */
export const useViewer = (): HeaderViewer | null => {
  const root = useRouteLoaderData<{ readonly viewer: HeaderViewer | null }>("root")
  const error = useRouteError()
  if (root !== undefined) return root.viewer
  if (isRouteErrorResponse(error)) {
    const carried = (error.data as { readonly viewer?: unknown } | null | undefined)?.viewer
    if (isHeaderViewer(carried)) return carried
  }
  return null
}
