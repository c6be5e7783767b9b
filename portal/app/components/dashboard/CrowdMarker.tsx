import { Link } from "react-router"
import type { LiveSource } from "../../live/board.ts"
import { RelativeTime } from "../RelativeTime.tsx"

/**
 * "Users report problems": the crowd's open signal on a source (services/crowd, decision 0015),
 * apart from the official status (its own colour and words), linking to the source's page where
 * the score and its reason are.
 */
export function CrowdMarker({ source }: { readonly source: LiveSource }) {
  if (source.crowd === null) return null
  return (
    <p className="crowd-signal" data-crowd={source.key}>
      <span aria-hidden="true">⚠ </span>
      <strong>Users report problems</strong> with {source.name} since <RelativeTime date={source.crowd.started_at} />{" "}
      (up to {source.crowd.peak_confidence} % confidence; the official status is unchanged) ·{" "}
      <Link to={`/sources/${source.key}`}>why</Link>
    </p>
  )
}
