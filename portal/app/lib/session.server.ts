import { Sessions, type Session } from "#services/identity/Sessions.ts"
import { clearSessionCookie, sessionTokenFrom, setSessionCookie } from "#services/identity/SessionCookie.ts"
import { type User, type UserOrganization, Users } from "#services/identity/Users.ts"
import { Effect } from "effect"
import { data, redirect } from "react-router"
import { type PortalContext, runEffect } from "./effect.server.ts"
import type { HeaderViewer } from "./viewer.ts"

/** The signed-in person of a request. */
export interface Viewer {
  readonly token: string
  readonly session: Session
  readonly user: User
  readonly organizations: ReadonlyArray<UserOrganization>
}

/**
 * The request came over https: the cookie gets `Secure`. The request's URL is the server's view of it
 * (services/api/Portal.ts): its scheme and host are the socket's, or those a proxy of `TRUSTED_PROXIES`
 * forwarded (services/api/TrustedProxies.ts); a client's own X-Forwarded-Proto is never read.
 */
export const isSecure = (request: Request) => new URL(request.url).protocol === "https:"

export const sessionCookieHeader = (request: Request, token: string) => setSessionCookie(token, { secure: isSecure(request) })
export const clearedCookieHeader = (request: Request) => clearSessionCookie({ secure: isSecure(request) })

/** A same-site path to return to after sign-in (`/dashboard/acme`), never another site (`//evil`, `https:`). */
export const safeNext = (next: string | null | undefined): string | undefined =>
  typeof next === "string" && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") && next.length <= 2000 ? next : undefined

const resolveViewer = (token: string) =>
  Effect.gen(function*() {
    const session = yield* Sessions.use((s) => s.resolve(token))
    const users = yield* Users
    const user = yield* users.get(session.user_id)
    const organizations = yield* users.organizationsOf(user.id)
    return { token, session, user, organizations } satisfies Viewer
  })

/** The signed-in person, or null (no cookie, or a session that ended). */
export const optionalUser = async (context: PortalContext, request: Request): Promise<Viewer | null> => {
  const token = sessionTokenFrom(request.headers.get("cookie"))
  if (token === undefined) return null
  return runEffect(context, request, resolveViewer(token).pipe(Effect.catchTags({ SessionExpired: () => Effect.succeed(null), NotFound: () => Effect.succeed(null) })))
}

/** The signed-in person; otherwise a redirect to /signin that returns to this page afterwards. */
export const requireUser = async (context: PortalContext, request: Request): Promise<Viewer> => {
  const viewer = await optionalUser(context, request)
  if (viewer !== null) return viewer
  const url = new URL(request.url)
  throw redirect(`/signin?next=${encodeURIComponent(url.pathname + url.search)}`)
}

/**
 * For every mutation: the session of the cookie and the form's `csrf` field
 * must match. A missing or ended session, or another token, is the 419 page
 * ("This page has expired"), never a raw error.
 */
export const requireCsrf = async (context: PortalContext, request: Request, form: FormData): Promise<Viewer> => {
  const token = sessionTokenFrom(request.headers.get("cookie"))
  if (token === undefined) throw data({ message: "you are signed out; sign in again" }, { status: 419, statusText: "SessionExpired" })
  const presented = form.get("csrf")
  const viewer = await runEffect(context, request, resolveViewer(token))
  const mismatch = await runEffect(context, request, Sessions.use((s) => s.checkCsrf(viewer.session, typeof presented === "string" ? presented : null)).pipe(
    Effect.as(undefined),
    Effect.catchTag("CsrfMismatch", Effect.succeed)
  ))
  // The session is still valid: the 419 page's header shows who is signed in (the root loader does not run for it).
  if (mismatch !== undefined) throw data({ message: mismatch.message, viewer: headerViewer(viewer) }, { status: 419, statusText: "CsrfMismatch" })
  return viewer
}

/** What the header and every form's CSRF field know of the signed-in person (never the session token). */
export const headerViewer = (viewer: Viewer): HeaderViewer => ({
  name: viewer.user.name || viewer.user.email,
  email: viewer.user.email,
  csrf: viewer.session.csrf_token,
  organizations: viewer.organizations.map((o) => ({ slug: o.slug, name: o.name }))
})

/** Where to go after sign-in: `next`, else the only organization's dashboard, else the chooser or /orgs/new. */
export const afterSignIn = (organizations: ReadonlyArray<UserOrganization>, next: string | undefined) =>
  next ?? (organizations.length === 1 ? `/dashboard/${organizations[0]!.slug}` : organizations.length === 0 ? "/orgs/new" : "/orgs")
