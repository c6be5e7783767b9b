import { StackBoard } from "#services/orgs/StackBoard.ts"
import { Effect } from "effect"
import { Link } from "react-router"
import type { Route } from "./+types/dashboard.ts"
import { HealthBanner, StatusBadge } from "../components/StatusBadge.tsx"
import { RelativeTime } from "../components/RelativeTime.tsx"
import { fromComponentStatus, fromMonitorState, fromSourceStatus, HealthCounts, LiveIndicator, NoScriptRefresh } from "../components/dashboard/Board.tsx"
import { SidePanels } from "../components/dashboard/SidePanels.tsx"
import stylesheet from "../components/dashboard/dashboard.css?url"
import { boardSourceKeys, type LiveSource, type LiveStack, toLiveBoard } from "../live/board.ts"
import { CrowdMarker } from "../components/dashboard/CrowdMarker.tsx"
import { useLiveBoard } from "../live/useLiveBoard.ts"
import { runEffect } from "../lib/effect.server.ts"
import { requireUser } from "../lib/session.server.ts"
import { crowdSignalsOf, organizationOf, principalOf } from "./dashboard/board.server.ts"

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `${loaderData?.organization.name ?? "Dashboard"} · statusgrid` }]

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

/** The organization's stacks with their items' current status, banners and open incidents (services/orgs/StackBoard.ts). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const viewer = await requireUser(context, request)
  const organization = organizationOf(viewer, params.org)
  const board = await runEffect(context, request, Effect.gen(function*() {
    const principal = yield* principalOf(viewer, organization.id)
    const board = yield* StackBoard.use((b) => b.organization(principal))
    return toLiveBoard(board, yield* crowdSignalsOf(boardSourceKeys(board)))
  }))
  return { organization: { slug: organization.slug, name: organization.name, role: organization.role }, board }
}

/** How many rows a stack's card lists before "N more on the stack page". */
const rowsPerCard = 8

/**
 * The live dashboard: each stack's banner and what is in it, the open
 * incidents and maintenances of its sources; one event stream keeps it
 * current (portal/app/live/), a 30 s refresh without JavaScript.
 */
export default function Dashboard({ loaderData }: Route.ComponentProps) {
  const { organization } = loaderData
  const { board, state, updatedAt } = useLiveBoard(loaderData.board, organization.slug)
  return (
    <section className="board">
      <NoScriptRefresh />
      <div className="board-head">
        <div>
          <h1>{organization.name}</h1>
          <p className="muted">
            {board.stacks.length} {board.stacks.length === 1 ? "stack" : "stacks"} · your role: {organization.role} ·{" "}
            <Link to={`/settings/${organization.slug}/stacks`}>Manage stacks</Link>
          </p>
        </div>
        <LiveIndicator state={state} updatedAt={updatedAt} />
      </div>
      {board.stacks.length === 0
        ? (
          <div className="panel empty">
            <h2>No stacks yet</h2>
            <p>A stack is the set of services one product depends on: its cloud, payments, e-mail, your own sites. Build one from the catalog of status pages.</p>
            <p><Link to={`/settings/${organization.slug}/stacks`}>Create a stack</Link></p>
          </div>
        )
        : (
          <div className="board-layout">
            <ul className="stack-cards" aria-label="Stacks">
              {board.stacks.map((stack) => <StackCard key={stack.id} org={organization.slug} stack={stack} />)}
            </ul>
            <SidePanels incidents={board.incidents} maintenances={board.maintenances} quietMaintenance />
          </div>
        )}
    </section>
  )
}

interface Row {
  readonly key: string
  readonly name: string
  readonly detail?: string
  readonly status: ReturnType<typeof fromSourceStatus>
  readonly changed: string | null
}

/** The rows of a card: picked components, whole sources (with their components not operational), monitors; worst first. */
const rowsOf = (stack: LiveStack): Array<Row> => {
  const rows: Array<Row> = []
  const sourceRows = (source: LiveSource) => {
    if (source.whole) {
      const troubled = source.components.filter((c) => c.status !== "operational").length
      rows.push({
        key: `s:${source.key}`,
        name: source.name,
        detail: troubled === 0 ? `all ${source.components.length} components` : `${troubled} of ${source.components.length} components affected`,
        status: fromSourceStatus(source.status),
        changed: source.last_changed_at
      })
    } else {
      for (const c of source.components) {
        rows.push({ key: `c:${source.key}:${c.external_id}`, name: c.name, detail: source.name, status: fromComponentStatus(c.status), changed: c.last_changed_at })
      }
    }
  }
  stack.sources.forEach(sourceRows)
  for (const m of stack.monitors) {
    rows.push({ key: `m:${m.id}`, name: m.name, detail: "your monitor", status: fromMonitorState(m.state), changed: m.last_changed_at })
  }
  const rank = { major_outage: 0, partial_outage: 1, degraded: 2, maintenance: 3, unknown: 4, operational: 5 } as const
  return rows.map((row, i) => ({ row, i })).toSorted((a, b) => rank[a.row.status] - rank[b.row.status] || a.i - b.i).map((x) => x.row)
}

function StackCard({ org, stack }: { readonly org: string; readonly stack: LiveStack }) {
  const rows = rowsOf(stack)
  const shown = rows.slice(0, rowsPerCard)
  const headingId = `stack-${stack.slug}`
  return (
    <li className="panel stack-card" aria-labelledby={headingId} data-stack={stack.slug}>
      <h2 id={headingId}><Link to={`/dashboard/${org}/stacks/${stack.slug}`}>{stack.name}</Link></h2>
      <HealthBanner banner={stack.health.status} />
      <HealthCounts stack={stack} />
      {stack.sources.map((source) => <CrowdMarker key={source.key} source={source} />)}
      {shown.length === 0 ? null : (
        <ul className="status-rows" aria-label={`What ${stack.name} shows`}>
          {shown.map((row) => (
            <li key={row.key} className="status-row" data-row={row.key}>
              <span className="row-name">
                {row.name}
                {row.detail === undefined ? null : <span className="muted row-detail">{row.detail}</span>}
              </span>
              <span className="row-status">
                <StatusBadge status={row.status} />
                {row.changed === null ? null : <span className="muted row-changed">changed <RelativeTime date={row.changed} /></span>}
              </span>
            </li>
          ))}
        </ul>
      )}
      {rows.length > shown.length
        ? <p className="more"><Link to={`/dashboard/${org}/stacks/${stack.slug}`}>{rows.length - shown.length} more on the stack page</Link></p>
        : null}
    </li>
  )
}
