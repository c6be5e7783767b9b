import { Schema } from "effect"
import { healthStatuses, type StackHealth as StackHealthValue } from "./StackHealth.ts"

/**
 * The wire Schemas of a stack's health (the API's `health` of stacks), for
 * the plain types of StackHealth.ts, whose rule the browser runs without
 * Effect. The assertions below fail to compile if the two ever differ.
 */
export const HealthStatus = Schema.Literals(healthStatuses)

export const HealthCounts = Schema.Struct({
  operational: Schema.Int,
  degraded: Schema.Int,
  outage: Schema.Int,
  maintenance: Schema.Int,
  unknown: Schema.Int.annotate({ description: "Items without a usable status (a monitor pending or paused); they do not move the banner." })
}).annotate({ identifier: "StackHealthCounts" })

export const StackHealth = Schema.Struct({
  status: HealthStatus,
  label: Schema.String.annotate({ description: "The banner's words: All Systems Operational, Degraded Performance, Partial Outage, Major Outage, Under Maintenance." }),
  counts: HealthCounts
}).annotate({
  identifier: "StackHealth",
  description: "The stack's banner by one rule (services/domain/StackHealth.ts): worst level wins; outage is major when at least half of the known items are out; maintenance only when nothing is worse; unknown items are counted apart."
})

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const schemaMatchesRule: Same<typeof StackHealth.Type, StackHealthValue> = true
void schemaMatchesRule
