import { Effect } from "effect"
import { Forbidden } from "../domain/api/Errors.ts"
import { can, type Permission } from "../domain/Permissions.ts"
import type { Principal } from "../domain/Principal.ts"

const described: Record<Permission, string> = {
  "view": "view this organization",
  "content.write": "create or change stacks, monitors, custom sources and maintenance windows",
  "content.delete": "delete stacks, monitors and custom sources",
  "notifications.manage": "manage notification rules and channels",
  "members.manage": "manage members, invitations and API keys",
  "billing.manage": "manage billing",
  "audit.view": "read the audit log"
}

/** Fails with 403 unless the principal's role has the permission (domain/Permissions.ts). */
export const requirePermission = (principal: Principal, permission: Permission): Effect.Effect<void, Forbidden> =>
  can(principal.role, permission)
    ? Effect.void
    : Effect.fail(new Forbidden({ message: `the ${principal.role} role cannot ${described[permission]}` }))
