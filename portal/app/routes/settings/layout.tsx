import { NavLink, Outlet } from "react-router"
import type { Route } from "./+types/layout.ts"
import stylesheet from "../../components/settings/settings.css?url"
import { settingsSections } from "../../components/settings/sections.ts"
import { requireMember } from "../../lib/member.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

/** Every settings page is a member's: the organization in the path, the role's allowances for the navigation. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, allowed } = await requireMember(context, request, params.org)
  return {
    organization: { slug: organization.slug, name: organization.name, role: organization.role },
    sections: settingsSections.filter((s) => allowed[s.needs]).map((s) => ({ path: s.path, label: s.label }))
  }
}

/** The settings of one organization: a side navigation (a row of links at 360 px) and the section's page. */
export default function SettingsLayout({ loaderData }: Route.ComponentProps) {
  const { organization, sections } = loaderData
  return (
    <div className="settings">
      <nav className="settings-nav" aria-label="Settings">
        <p className="settings-org">
          {organization.name}
          <span className="muted"> · {organization.role}</span>
        </p>
        <ul>
          {sections.map((s) => (
            <li key={s.path}>
              <NavLink to={`/settings/${organization.slug}/${s.path}`}>{s.label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <div className="settings-page">
        <Outlet />
      </div>
    </div>
  )
}
