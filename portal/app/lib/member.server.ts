import { isIP } from "node:net"
import { peerHeader } from "#services/api/Crowd/http.ts"
import { can, type Permission } from "#services/domain/Permissions.ts"
import { Users } from "#services/identity/Users.ts"
import { data } from "react-router"
import { type PortalContext, runEffect } from "./effect.server.ts"
import { requireCsrf, requireUser, type Viewer } from "./session.server.ts"

/** The viewer's organization named in the path, or the 404 page (never a hint that it exists). */
export const organizationOf = (viewer: Viewer, slug: string | undefined) => {
  const organization = viewer.organizations.find((o) => o.slug === slug)
  if (organization === undefined) throw data({ message: `no organization ${slug ?? ""}` }, { status: 404 })
  return organization
}

/**
 * The caller's address for the audit log, as the server saw it (`peerHeader`, set by services/api/Portal.ts:
 * the socket's peer, or the client a trusted proxy forwarded, `TRUSTED_PROXIES`), or null when it is no
 * IP address. Never the request's own `X-Forwarded-For`, which any client writes.
 */
export const clientIp = (request: Request): string | null => {
  const address = request.headers.get(peerHeader)?.replace(/^::ffff:/u, "") ?? ""
  return isIP(address) === 0 ? null : address
}

/** The viewer as a member of the organization, as the API's session principal (the same checks as the API). */
export const principalOf = (viewer: Viewer, organizationId: string, ip: string | null = null) =>
  Users.use((u) => u.principalFor(viewer.user.id, organizationId, ip))

/** What each permission of services/domain/Permissions.ts allows this role; pages hide what it cannot do. */
export const allowedFor = (role: Parameters<typeof can>[0]): Record<Permission, boolean> => ({
  "view": can(role, "view"),
  "content.write": can(role, "content.write"),
  "content.delete": can(role, "content.delete"),
  "notifications.manage": can(role, "notifications.manage"),
  "members.manage": can(role, "members.manage"),
  "billing.manage": can(role, "billing.manage"),
  "audit.view": can(role, "audit.view")
})

/**
 * A settings page's loader: the signed-in member of `/settings/<org>/…` with
 * the API's principal (pass it to the same service calls as the API, which
 * check the permission table themselves) and what the role may do.
 */
export const requireMember = async (context: PortalContext, request: Request, slug: string | undefined) => {
  const viewer = await requireUser(context, request)
  const organization = organizationOf(viewer, slug)
  const principal = await runEffect(context, request, principalOf(viewer, organization.id, clientIp(request)))
  return { viewer, organization, principal, allowed: allowedFor(principal.role) }
}

/**
 * A settings page's action: the CSRF check of every mutation (the 419 page
 * otherwise), then the member as in `requireMember`. The services refuse what
 * the role may not do (Forbidden → 403 page), whatever the page showed.
 */
export const requireMemberAction = async (context: PortalContext, request: Request, form: FormData, slug: string | undefined) => {
  const viewer = await requireCsrf(context, request, form)
  const organization = organizationOf(viewer, slug)
  const principal = await runEffect(context, request, principalOf(viewer, organization.id, clientIp(request)))
  return { viewer, organization, principal, allowed: allowedFor(principal.role) }
}
