import { Schema } from "effect"
import type { Role } from "./Organization.ts"

/**
 * What a member or API key may do, by role, for every record, in one place
 * for the API and the portal (decision 0007):
 * - everything an organization can see, every role may view (`view`);
 * - records that make up dashboards (stacks and their items, monitors, custom
 *   sources, maintenance windows) follow "Create stacks" (`content.write`)
 *   and "Delete stacks" (`content.delete`);
 * - notification rules, channels and test sends follow "Manage notifications";
 * - members, invitations, roles and API keys follow "Invite members";
 * - the audit log is for Admins; "Manage billing" awaits the portal's billing
 *   pages (the plan itself is changed only by the operator: `statusgrid org plan`).
 */
export const Permission = Schema.Literals([
  "view",
  "content.write",
  "content.delete",
  "notifications.manage",
  "members.manage",
  "billing.manage",
  "audit.view"
])
export type Permission = typeof Permission.Type

export const permissions: Record<Permission, ReadonlyArray<Role>> = {
  "view": ["admin", "member", "viewer"],
  "content.write": ["admin", "member"],
  "content.delete": ["admin"],
  "notifications.manage": ["admin", "member"],
  "members.manage": ["admin"],
  "billing.manage": ["admin"],
  "audit.view": ["admin"]
}

export const can = (role: Role, permission: Permission): boolean => permissions[permission].includes(role)
