import { type Banner, bannerWords, type Shown, statusLooks } from "#services/domain/StatusWords.ts"

/** A status as icon + word + colour (never colour alone). */
export function StatusBadge({ status }: { readonly status: Shown }) {
  const look = statusLooks[status]
  return (
    <span className={`badge tone-${look.tone}`}>
      <span className="badge-icon" aria-hidden="true">{look.icon}</span>
      {look.word}
    </span>
  )
}

const bannerTone = { operational: "ok", degraded: "warn", partial_outage: "partial", major_outage: "down", maintenance: "maint" } as const

/** The health banner of a stack ("All Systems Operational"...). */
export function HealthBanner({ banner }: { readonly banner: Banner }) {
  const look = statusLooks[banner]
  return (
    <p className={`banner tone-${bannerTone[banner]}`} role="status">
      <span className="badge-icon" aria-hidden="true">{look.icon}</span>
      {bannerWords[banner]}
    </p>
  )
}
