import { Context } from "effect"
import type { PlanId, Role } from "./Organization.ts"

/** Who is acting, for which organization, with which role: from an API key or a portal session. */
export interface Principal {
  readonly organization_id: string
  readonly organization_slug: string
  readonly plan: PlanId
  readonly role: Role
  readonly actor: { readonly kind: "api_key" | "user"; readonly id: string }
  /** The caller's address, for the audit log; null when unknown. */
  readonly ip: string | null
}

export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("statusgrid/domain/CurrentPrincipal") {}
