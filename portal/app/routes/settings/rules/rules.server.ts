import type { Principal } from "#services/domain/Principal.ts"
import { ruleLimits, weekdays } from "#services/domain/Rule.ts"
import { Channels } from "#services/orgs/Channels.ts"
import { Monitors } from "#services/orgs/Monitors.ts"
import { Organizations } from "#services/orgs/Organizations.ts"
import { StackBoard } from "#services/orgs/StackBoard.ts"
import { Effect } from "effect"
import type { RuleBounds, RuleOptions } from "../../../components/settings/rules/RuleForm.tsx"
import { type FieldErrors, withoutFieldName } from "../../../lib/forms.server.ts"

export const ruleBounds: RuleBounds = { weekdays, groupWindow: ruleLimits.groupWindow, cooldown: ruleLimits.cooldown, crowdConfidence: ruleLimits.crowdConfidence, escalationSteps: ruleLimits.escalationSteps }

/**
 * What the rule editor offers (the organization's stacks, the components they
 * show, its monitors and channels) and the plan: channels per rule, whether
 * escalation and templates are included (Enterprise).
 */
export const ruleEditorData = (principal: Principal) =>
  Effect.gen(function*() {
    const [board, monitors, channels, org] = yield* Effect.all([
      StackBoard.use((b) => b.organization(principal)),
      Monitors.use((m) => m.list(principal, { limit: 200 })),
      Channels.use((c) => c.list(principal, { limit: 200 })),
      Organizations.use((o) => o.get(principal))
    ], { concurrency: 4 })
    const components = new Map<string, { id: string; name: string; stack: string }>()
    for (const stack of board.stacks) {
      for (const source of stack.sources) {
        for (const c of source.components) if (!components.has(c.id)) components.set(c.id, { id: c.id, name: c.name, stack: stack.name })
      }
    }
    const options: RuleOptions = {
      stacks: board.stacks.map((s) => ({ id: s.id, name: s.name })),
      components: [...components.values()],
      monitors: monitors.data.map((m) => ({ id: m.id, name: m.name })),
      channels: channels.data.map((c) => ({ id: c.id, name: c.name, type: c.type }))
    }
    return {
      options,
      limits: { channelsPerRule: org.limits.max_channels_per_rule, rules: org.limits.max_rules },
      canEscalate: org.plan === "enterprise"
    }
  })

/** A service's InvalidParameter/NotFound/PlanLimitReached as the editor's field errors (`schedule.timezone` stays as is). */
export const ruleErrors = (e: { readonly _tag: string; readonly message: string; readonly field?: string | undefined }): FieldErrors => {
  if (e._tag === "PlanLimitReached" || e.field === undefined) return { form: e.message }
  return { [e.field]: withoutFieldName(e.field, e.message) }
}
