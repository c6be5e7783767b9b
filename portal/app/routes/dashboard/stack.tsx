import type { HistoryWindow } from "#services/domain/History.ts"
import { StackBoard } from "#services/orgs/StackBoard.ts"
import { stackCellsOf } from "#services/domain/StackDurations.ts"
import { StackAnalyticsReader } from "#services/reports/StackAnalytics.ts"
import { Clock, Effect } from "effect"
import { Suspense } from "react"
import { Await, data, Link } from "react-router"
import type { Route } from "./+types/stack.ts"
import { HealthBanner, StatusBadge } from "../../components/StatusBadge.tsx"
import { RelativeTime } from "../../components/RelativeTime.tsx"
import {
  fromComponentStatus,
  fromMonitorState,
  fromSourceStatus,
  HealthCounts,
  LiveIndicator,
  NoScriptRefresh
} from "../../components/dashboard/Board.tsx"
import stylesheet from "../../components/dashboard/dashboard.css?url"
import { SidePanels } from "../../components/dashboard/SidePanels.tsx"
import { HistoryStrip, type Strip, StripSkeleton } from "../../components/dashboard/HistoryStrip.tsx"
import { boardSourceKeys, toLiveBoard } from "../../live/board.ts"
import { CrowdMarker } from "../../components/dashboard/CrowdMarker.tsx"
import { ReportProblem } from "../../components/crowd/ReportProblem.tsx"
import { reportableSources, reportProblem } from "../../lib/crowdReport.server.ts"
import { useLiveBoard } from "../../live/useLiveBoard.ts"
import { runEffect } from "../../lib/effect.server.ts"
import { requireUser } from "../../lib/session.server.ts"
import { crowdSignalsOf, historyOf, itemStripKeys, organizationOf, principalOf, subjectsOf } from "./board.server.ts"

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.board.stacks[0]?.name ?? "Stack"} · ${loaderData?.organization.name ?? ""} · statusgrid` }
]

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

/**
 * One stack (alert links land here): its components by source with status and
 * last check, monitors, open incidents and maintenances, at once; the history
 * strips (24 h or `?window=90d`) stream in after, so a slow ClickHouse read
 * never holds the page.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const viewer = await requireUser(context, request)
  const organization = organizationOf(viewer, params.org)
  const { board, crowd, principal } = await runEffect(context, request, Effect.gen(function*() {
    const principal = yield* principalOf(viewer, organization.id)
    const board = yield* StackBoard.use((b) => b.stack(principal, params.slug))
    return { board, crowd: yield* crowdSignalsOf(boardSourceKeys(board)), principal }
  }))
  const window: HistoryWindow = new URL(request.url).searchParams.get("window") === "90d" ? "90d" : "24h"
  const history = historyOf(context, request, subjectsOf(board), window)
  const keys = itemStripKeys(board)
  // The stack's own strip: its items' cells combined by the banner's rule; its uptime by time over the window (StackAnalytics).
  const stackStrip = Promise.all([
    history,
    runEffect(context, request, Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const figures = yield* StackAnalyticsReader.use((r) => r.readBySlug(principal, params.slug, { from: now - windowMs[window], to: now }))
      return figures.analytics.uptime
    }).pipe(Effect.catchTag("HistoryUnavailable", () => Effect.succeed(null))))
  ]).then(([read, uptime]): Strip | null => {
    if (read.unavailable) return null
    const strips = keys.flatMap((k) => (read.strips[k] === undefined ? [] : [read.strips[k]]))
    if (strips.length === 0) return null
    const cells = stackCellsOf(strips.map((s) => s.cells.map(([, status]) => status)))
    return { cells: strips[0]!.cells.map(([start], i) => [start, cells[i]!] as const), uptime }
  })
  return {
    organization: { slug: organization.slug, name: organization.name },
    reportable: await reportableSources(context, request, boardSourceKeys(board)),
    board: toLiveBoard(board, crowd),
    window,
    history,
    stackStrip
  }
}

/** A member's crowd report about one of the stack's services (ReportProblem): the person is the reporter. */
export async function action({ request, context, params }: Route.ActionArgs) {
  const viewer = await requireUser(context, request)
  organizationOf(viewer, params.org)
  const form = await request.formData()
  if (form.get("intent") !== "report") throw data({ message: "unknown intent" }, { status: 400 })
  const source = form.get("source")
  return reportProblem(context, request, form, typeof source === "string" ? source : "")
}

const windowMs: Record<HistoryWindow, number> = { "24h": 24 * 3_600_000, "90d": 90 * 24 * 3_600_000 }

export default function StackPage({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, window } = loaderData
  const slug = loaderData.board.stacks[0]!.slug
  const { board, state, updatedAt } = useLiveBoard(loaderData.board, organization.slug, slug)
  const stack = board.stacks[0]!
  const base = `/dashboard/${organization.slug}/stacks/${stack.slug}`
  return (
    <section className="board stack-page">
      <NoScriptRefresh />
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link to={`/dashboard/${organization.slug}`}>{organization.name}</Link> <span aria-hidden="true">›</span> <span>{stack.name}</span>
        {" · "}<Link to={`${base}/analytics`}>Uptime and outages</Link>
        {" · "}<Link to={`/settings/${organization.slug}/stacks/${stack.id}`}>Stack settings</Link>
      </nav>
      <div className="board-head">
        <div>
          <h1>{stack.name}</h1>
          {stack.description === "" ? null : <p className="muted">{stack.description}</p>}
        </div>
        <LiveIndicator state={state} updatedAt={updatedAt} />
      </div>
      <HealthBanner banner={stack.health.status} />
      <HealthCounts stack={stack} />
      <div className="board-layout">
        <div className="stack-main">
          <div className="window-toggle" role="group" aria-label="History window">
            <span className="muted">History:</span>
            <Link to={base} aria-current={window === "24h" ? "true" : undefined} preventScrollReset>24 hours</Link>
            <Link to={`${base}?window=90d`} aria-current={window === "90d" ? "true" : undefined} preventScrollReset>90 days</Link>
          </div>
          <section className="panel source-group stack-own" aria-labelledby="stack-strip-heading">
            <div className="source-head"><h2 id="stack-strip-heading">The stack as a whole</h2></div>
            <p className="muted source-meta">Each {window === "24h" ? "hour" : "day"} as the banner would have shown it; uptime by time over the {window === "24h" ? "24 hours" : "90 days"}.</p>
            <StackStripSlot strip={loaderData.stackStrip} window={window} name={stack.name} />
          </section>
          {stack.sources.length === 0 && stack.monitors.length === 0
            ? (
              <div className="panel empty">
                <h2>This stack is empty</h2>
                <p>Add components of the catalog's sources, whole sources or your own website monitors to see them here.</p>
              </div>
            )
            : null}
          {stack.sources.map((source) => {
            const headingId = `source-${source.key}`
            return (
              <section key={source.key} className="panel source-group" aria-labelledby={headingId} data-source={source.key}>
                <div className="source-head">
                  <h2 id={headingId}>{source.name}</h2>
                  <StatusBadge status={fromSourceStatus(source.status)} />
                </div>
                <p className="muted source-meta">
                  {source.last_checked_at === null ? "not checked yet" : <>checked <RelativeTime date={source.last_checked_at} /></>}
                  {source.status_page_url === null ? null : <> · <a href={source.status_page_url} rel="noreferrer noopener" target="_blank">official status page</a></>}
                  {source.whole ? " · whole source" : null}
                </p>
                <CrowdMarker source={source} />
                <ul className="component-rows" aria-label={`Components of ${source.name}`}>
                  {source.components.map((c) => (
                    <li key={c.external_id} className="component-row" data-component={c.external_id}>
                      <span className="row-name">
                        {c.name}
                        <span className="muted row-detail">
                          {c.last_changed_at === null ? "no change recorded" : <>changed <RelativeTime date={c.last_changed_at} /></>}
                        </span>
                      </span>
                      <StatusBadge status={fromComponentStatus(c.status)} />
                      <StripSlot history={loaderData.history} stripKey={`source:${source.key}:${c.external_id}`} window={window} name={c.name} />
                    </li>
                  ))}
                </ul>
              </section>
            )
          })}
          {stack.monitors.length === 0 ? null : (
            <section className="panel source-group" aria-labelledby="monitors-heading">
              <div className="source-head"><h2 id="monitors-heading">Your monitors</h2></div>
              <ul className="component-rows" aria-label="Monitors">
                {stack.monitors.map((m) => (
                  <li key={m.id} className="component-row" data-monitor={m.id}>
                    <span className="row-name">
                      {m.name}
                      <span className="muted row-detail">
                        {m.state === "paused"
                          ? "paused: not checked until resumed"
                          : m.last_checked_at === null ? "not checked yet" : <>checked <RelativeTime date={m.last_checked_at} /></>}
                      </span>
                    </span>
                    <StatusBadge status={fromMonitorState(m.state)} />
                    <StripSlot history={loaderData.history} stripKey={`monitor:${m.id}`} window={window} name={m.name} />
                  </li>
                ))}
              </ul>
            </section>
          )}
        </div>
        <SidePanels incidents={board.incidents} maintenances={board.maintenances}>
          <ReportProblem sources={loaderData.reportable} result={actionData} />
        </SidePanels>
      </div>
    </section>
  )
}

/** The stack's own strip once its items' strips and its uptime arrive. */
function StackStripSlot(props: { readonly strip: Promise<Strip | null>; readonly window: HistoryWindow; readonly name: string }) {
  return (
    <Suspense fallback={<StripSkeleton />}>
      <Await resolve={props.strip} errorElement={<span className="strip muted">history unavailable</span>}>
        {(strip: Strip | null) => strip === null ? <span className="strip muted">no history</span> : <HistoryStrip strip={strip} window={props.window} name={props.name} />}
      </Await>
    </Suspense>
  )
}

type History = Awaited<Route.ComponentProps["loaderData"]["history"]>

/** One subject's strip once the history read arrives; a skeleton until then, a quiet note if ClickHouse did not answer. */
function StripSlot(props: { readonly history: Promise<History>; readonly stripKey: string; readonly window: HistoryWindow; readonly name: string }) {
  return (
    <Suspense fallback={<StripSkeleton />}>
      <Await resolve={props.history} errorElement={<span className="strip muted">history unavailable</span>}>
        {(history: History) => {
          if (history.unavailable) return <span className="strip muted">history unavailable</span>
          const strip: Strip | undefined = history.strips[props.stripKey]
          return strip === undefined ? <span className="strip muted">no history</span> : <HistoryStrip strip={strip} window={props.window} name={props.name} />
        }}
      </Await>
    </Suspense>
  )
}
