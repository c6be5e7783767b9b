import { type ReactNode, useEffect } from "react"
import { isRouteErrorResponse, Link, Links, Meta, Outlet, Scripts, ScrollRestoration } from "react-router"
import type { Route } from "./+types/root.ts"
import stylesheet from "./app.css?url"
import { Header } from "./components/Header.tsx"
import { headerViewer, optionalUser } from "./lib/session.server.ts"
import { useNonce } from "./lib/nonce.ts"
import { useViewer } from "./lib/viewer.ts"

export const links: Route.LinksFunction = () => [
  { rel: "stylesheet", href: stylesheet },
  { rel: "icon", href: "/favicon.svg", type: "image/svg+xml" },
  // The installable app (PWA): its manifest and the home-screen icon of iOS.
  { rel: "manifest", href: "/manifest.webmanifest" },
  { rel: "apple-touch-icon", href: "/icons/icon-192.png" }
]

/** Who is signed in, for the header and every form's CSRF field (never the session token). */
export async function loader({ request, context }: Route.LoaderArgs) {
  const viewer = await optionalUser(context, request)
  return { viewer: viewer && headerViewer(viewer) }
}
export type RootData = Awaited<ReturnType<typeof loader>>

export function Layout({ children }: { readonly children: ReactNode }) {
  const viewer = useViewer()
  const nonce = useNonce()
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <meta name="theme-color" content="#0b5cad" />
        <Meta />
        <Links />
      </head>
      <body>
        <a className="skip-link" href="#main">Skip to content</a>
        <Header viewer={viewer} />
        <main id="main">{children}</main>
        <ScrollRestoration nonce={nonce} />
        <Scripts nonce={nonce} />
      </body>
    </html>
  )
}

export default function App() {
  useServiceWorker()
  return <Outlet />
}

/**
 * The service worker (/sw.js: shows Web Push alerts) registered once the
 * page is idle, on every page, so that the installed app and its push
 * subscription keep a worker. It has no fetch handler: pages load as without it.
 */
function useServiceWorker() {
  useEffect(() => {
    if (!("serviceWorker" in navigator)) return
    const register = () => void navigator.serviceWorker.register("/sw.js").catch(() => undefined)
    if ("requestIdleCallback" in window) {
      const handle = window.requestIdleCallback(register, { timeout: 5_000 })
      return () => window.cancelIdleCallback(handle)
    }
    const timer = setTimeout(register, 2_000)
    return () => clearTimeout(timer)
  }, [])
}

/** 404, 419 (expired page or session) and anything else, in the portal's look. */
export function ErrorBoundary({ error }: Route.ErrorBoundaryProps) {
  if (isRouteErrorResponse(error) && error.status === 419) return <Expired />
  if (isRouteErrorResponse(error) && error.status === 404) return <NotFound />
  const status = isRouteErrorResponse(error) ? error.status : 500
  return (
    <section className="panel narrow message-page">
      <title>Something went wrong · statusgrid</title>
      <p className="eyebrow">Error {status}</p>
      <h1>Something went wrong</h1>
      <p>{status === 403 ? "You do not have access to this page." : "The page could not be shown. It has been logged; try again in a moment."}</p>
      <p><Link to="/" className="button">Go to the start page</Link></p>
    </section>
  )
}

export function NotFound() {
  return (
    <section className="panel narrow message-page">
      <title>Page not found · statusgrid</title>
      <p className="eyebrow">Error 404</p>
      <h1>Page not found</h1>
      <p>There is no page at this address. It may have moved, or the link may be incomplete.</p>
      <p><Link to="/" className="button">Go to the start page</Link></p>
    </section>
  )
}

/** The spec's 419: the form was older than the session (signed out, expired, or a forged token). */
function Expired() {
  const viewer = useViewer()
  if (viewer) {
    return (
      <section className="panel narrow message-page">
        <title>This page has expired · statusgrid</title>
        <p className="eyebrow">Error 419</p>
        <h1>This page has expired</h1>
        <p>The form was opened before your current session began, or too long ago. Nothing was changed; open the page again and retry.</p>
        <p className="actions">
          <a href="/" className="button">Go back to the start page</a>
        </p>
      </section>
    )
  }
  return (
    <section className="panel narrow message-page">
      <title>This page has expired · statusgrid</title>
      <p className="eyebrow">Error 419</p>
      <h1>This page has expired</h1>
      <p>You were signed out, or the form was opened too long ago. Nothing was changed.</p>
      <p className="actions">
        <a href="/" className="button">Go back to the start page</a>
        <a href="/signin">Sign in again</a>
      </p>
    </section>
  )
}
