import { Context, Effect } from "effect"
import type { Principal } from "../domain/Principal.ts"

/**
 * What runs after a person created an organization (identity/Users.ts
 * `createOrganization`, once its transaction committed), with the new
 * organization's Admin as the principal. By default nothing; demo mode
 * provides one that gives the organization a starter stack
 * (services/demo/StarterStack.ts), so that a folder below `demo` never
 * imports it. A failure is logged by the caller and never undoes the
 * organization.
 */
export interface OrganizationCreatedListener {
  readonly created: (principal: Principal) => Effect.Effect<void, unknown>
}

export const OrganizationCreated = Context.Reference<OrganizationCreatedListener>("statusgrid/orgs/OrganizationCreated", {
  defaultValue: () => ({ created: () => Effect.void })
})
