/** One plan limit as the pages show it: used of limit (null: unlimited), and whether one more would pass it. */
export interface Usage {
  readonly used: number
  readonly limit: number | null
  readonly full: boolean
}

const planNames: Record<string, string> = { free: "Free", pro: "Pro", enterprise: "Enterprise" }

/** "free" → "Free". */
export const planName = (plan: string) => planNames[plan] ?? plan

/** "1 of 1 stacks on Free", "3 stacks (no limit on Pro)". */
export const usageText = (u: Usage, what: string, plan: string) =>
  u.limit === null ? `${u.used} ${what} (no limit on ${planName(plan)})` : `${u.used} of ${u.limit} ${what} on ${planName(plan)}`
