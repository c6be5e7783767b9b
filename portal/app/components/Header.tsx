import { Form, Link, NavLink, useParams } from "react-router"
import type { RootData } from "../root.tsx"
import { CsrfField } from "./Forms.tsx"

type Viewer = NonNullable<RootData["viewer"]>

/** Product name, organization switcher, sign in/out. Wraps on a 360 px phone. */
export function Header({ viewer }: { readonly viewer: Viewer | null | undefined }) {
  const { org } = useParams()
  const current = viewer?.organizations.find((o) => o.slug === org)
  return (
    <header className="site-header">
      <Link to={viewer ? (current ? `/dashboard/${current.slug}` : "/orgs") : "/"} className="brand">
        <img src="/favicon.svg" alt="" width="24" height="24" />
        statusgrid
      </Link>
      {viewer ? <OrgSwitcher viewer={viewer} current={current?.slug} /> : null}
      <nav className="site-nav" aria-label="Main">
        {viewer ? <NavLink to={current ? `/dashboard/${current.slug}` : "/orgs"} end>Dashboard</NavLink> : null}
        <NavLink to="/catalog">Catalog</NavLink>
        {current ? <NavLink to={`/settings/${current.slug}`}>Settings</NavLink> : null}
      </nav>
      <nav className="account" aria-label="Account">
        {viewer
          ? (
            <>
              <span className="who">{viewer.name}</span>
              <NavLink to="/profile">Profile</NavLink>
              <Form method="post" action="/signout">
                <CsrfField />
                <button type="submit" className="link-button">Sign out</button>
              </Form>
            </>
          )
          : (
            <>
              <Link to="/signin">Sign in</Link>
              <Link to="/signup" className="button small">Sign up</Link>
            </>
          )}
      </nav>
    </header>
  )
}

/** A <details> menu: works without JavaScript, closes on navigation. */
function OrgSwitcher({ viewer, current }: { readonly viewer: Viewer; readonly current: string | undefined }) {
  const shown = viewer.organizations.find((o) => o.slug === current)
  return (
    <details className="org-switcher" key={current ?? ""}>
      <summary>
        <span className="visually-hidden">Organization: </span>
        {shown?.name ?? "Organizations"}
      </summary>
      <ul>
        {viewer.organizations.map((o) => (
          <li key={o.slug}>
            <Link to={`/dashboard/${o.slug}`} aria-current={o.slug === current ? "page" : undefined}>{o.name}</Link>
          </li>
        ))}
        <li><Link to="/orgs/new">+ New organization</Link></li>
      </ul>
    </details>
  )
}
