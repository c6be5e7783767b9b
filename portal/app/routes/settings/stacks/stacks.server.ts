import type { Principal } from "#services/domain/Principal.ts"
import { Organizations } from "#services/orgs/Organizations.ts"
import { Effect, Schema } from "effect"
import type { Usage } from "../../../components/settings/usage.ts"

const usage = (l: { readonly used: number; readonly limit: number | null }): Usage => ({
  used: l.used,
  limit: l.limit,
  full: l.limit !== null && l.used >= l.limit
})

/** The organization's plan and its stack limits, from the service behind the API's `GET /organization`. */
export const stackUsage = (principal: Principal) =>
  Organizations.use((o) => o.get(principal)).pipe(
    Effect.map((org) => ({ plan: org.plan, stacks: usage(org.limits.max_stacks), components: usage(org.limits.max_components) }))
  )

/** A UUID as the API's path parameters accept it (a stack's or an item's id). */
export const isUuid = Schema.is(Schema.String.check(Schema.isUUID()))
