import { SourceHistories } from "#services/api/SourceHistory.ts"
import { CrowdReports } from "#services/crowd/CrowdReports.ts"
import { Sources } from "#services/api/Sources.ts"
import { StackCreate, StackItemAdd } from "#services/domain/api/Stacks.ts"
import { HistoryWindow, type StatusStrip } from "#services/domain/History.ts"
import { can } from "#services/domain/Permissions.ts"
import { categoryNames, checkClassIntervalSeconds } from "#services/domain/Source.ts"
import { fromSourceStatus } from "#services/domain/StatusWords.ts"
import { Users } from "#services/identity/Users.ts"
import { Stacks } from "#services/orgs/Stacks.ts"
import { Clock, DateTime, Effect, Result, Schema } from "effect"
import { Suspense } from "react"
import { Await, data, Link, useSearchParams } from "react-router"
import type { Route } from "./+types/source.ts"
import { AddToStack, type AddResult } from "../../components/catalog/AddToStack.tsx"
import { ComponentTree, pickableGroups } from "../../components/catalog/ComponentTree.tsx"
import { CrowdReport, type ReportResult, shownCrowdOf, type ShownRecord } from "../../components/catalog/CrowdReport.tsx"
import { HistoryStrip, percentText, type ShownStrip } from "../../components/catalog/HistoryStrip.tsx"
import { RelativeTime } from "../../components/RelativeTime.tsx"
import { StatusBadge } from "../../components/StatusBadge.tsx"
import { reportProblem } from "../../lib/crowdReport.server.ts"
import { runEffect } from "../../lib/effect.server.ts"
import { decodeForm, type FieldErrors, fieldError } from "../../lib/forms.server.ts"
import { optionalUser, requireCsrf } from "../../lib/session.server.ts"
import catalogCss from "../../components/catalog/catalog.css?url"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: catalogCss }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: loaderData ? `${loaderData.source.name} status · statusgrid` : "Source · statusgrid" },
  { name: "description", content: loaderData ? `Is ${loaderData.source.name} down? Its official status, components, incidents and history.` : "" }
]

/** Incidents and maintenances shown: the latest of each. */
const shownEvents = 10

const isWindow = Schema.is(HistoryWindow)
const iso = (d: DateTime.Utc): string => DateTime.formatIso(d)

/** A StatusHistory strip as plain values for the page. */
const shownStrip = (strip: StatusStrip): ShownStrip => ({
  cell: strip.cell,
  cells: strip.cells.map((c) => ({ start: iso(c.start), status: c.status, uptime: c.uptime })),
  uptime: strip.uptime.percent,
  uptime_30d: strip.uptime_30d.percent
})

const notFound = (key: string) => data({ message: `no source ${key}` }, { status: 404, statusText: "NotFound" })

/**
 * One catalog source through the sources reader the API uses (`/api/v1/sources/{key}`, its components,
 * incidents and maintenances), and its history strip streamed after the page (`SourceHistories`, the API's
 * `/history`): the 90-day query may take a second, the page does not wait for it.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const key = params.key
  const url = new URL(request.url)
  const window = url.searchParams.get("window") ?? "24h"
  const viewer = await optionalUser(context, request)
  const read = await runEffect(context, request, Effect.gen(function*() {
    const sources = yield* Sources
    const [source, components, incidents, maintenances] = yield* Effect.all([
      sources.get(key),
      sources.components(key),
      // No cursor is passed, so the only failure left is the source's absence (a 404, whichever read sees it first).
      sources.incidents(key, { limit: shownEvents }).pipe(Effect.catchTag("InvalidParameter", Effect.die)),
      sources.maintenances(key, { limit: shownEvents }).pipe(Effect.catchTag("InvalidParameter", Effect.die))
    ], { concurrency: "unbounded" })
    // The crowd's score beside the official status. Whatever keeps it from being read (a failure, or a defect
    // such as a lost database connection), the page still shows the source and says reports are unavailable.
    const [crowd, record] = yield* Effect.all([
      CrowdReports.use((c) => c.score(key)).pipe(
        Effect.map(shownCrowdOf),
        Effect.catchCause((cause) => Effect.as(Effect.logWarning("source page: crowd score unavailable", cause), null))
      ),
      CrowdReports.use((c) => c.record(key)).pipe(
        Effect.map((r): ShownRecord => ({ sentence: r.sentence, false_alarms: r.false_alarms, days: r.days })),
        Effect.catchCause((cause) => Effect.as(Effect.logWarning("source page: crowd record unavailable", cause), null))
      )
    ], { concurrency: 2 })
    return { source, components, incidents: incidents.data, maintenances: maintenances.data, crowd, record, now: yield* Clock.currentTimeMillis }
  }).pipe(Effect.result))
  if (Result.isFailure(read)) throw notFound(key)
  const { source, components, incidents, maintenances, crowd, record, now } = read.success

  const strip = isWindow(window) ? window : "24h"
  // Not awaited: React Router streams it into <Await>; a failure shows "history unavailable", quietly.
  const history = runEffect(context, request, SourceHistories.use((h) => h.read(key, strip))).then(
    (h) => ({ source: shownStrip(h.history) }),
    () => null
  )

  // The add form: for the organization named by ?org= (else the first where the viewer may write), its stacks.
  const organizations = viewer?.organizations ?? []
  const org = organizations.find((o) => o.slug === url.searchParams.get("org"))
    ?? organizations.find((o) => can(o.role, "content.write")) ?? organizations[0]
  const stacks = org === undefined || !can(org.role, "content.write") ? [] : await runEffect(context, request, Effect.gen(function*() {
    const principal = yield* Users.use((u) => u.principalFor(viewer!.user.id, org.id))
    const page = yield* Stacks.use((s) => s.list(principal, { limit: 100 }))
    return page.data.map((s) => ({ id: s.id, name: s.name, slug: s.slug }))
  }))

  return {
    source: {
      key: source.key,
      name: source.name,
      description: source.description,
      status: fromSourceStatus(source.status),
      status_page_url: source.status_page_url,
      service_url: source.service_url,
      categories: source.categories.map((c) => categoryNames[c]),
      components_count: source.components_count,
      incidents_count: source.incidents_count,
      last_checked_at: source.last_checked_at === null ? null : iso(source.last_checked_at),
      interval_s: checkClassIntervalSeconds[source.check_class],
      provider_type: source.provider_type,
      reliability: source.reliability,
      regions: source.regions.map((r) => ({ region: r.region, status: fromSourceStatus(r.status) }))
    },
    components,
    incidents: incidents.map((i) => ({
      id: i.id,
      title: i.title,
      status: i.status,
      impact: i.impact,
      url: i.url,
      region: i.region,
      started_at: iso(i.started_at),
      resolved_at: i.resolved_at === null ? null : iso(i.resolved_at),
      updates: i.updates.map((u) => ({ id: u.id, status: u.status, body: u.body, created_at: iso(u.created_at) })),
      components: i.components.map((c) => c.name)
    })),
    // Upcoming or under way: not finished, and not ended before now.
    maintenances: maintenances
      .filter((m) => m.status !== "completed" && m.status !== "cancelled" && (m.scheduled_until === null || DateTime.toEpochMillis(m.scheduled_until) > now))
      .map((m) => ({
        id: m.id,
        title: m.title,
        status: m.status,
        url: m.url,
        scheduled_for: iso(m.scheduled_for),
        scheduled_until: m.scheduled_until === null ? null : iso(m.scheduled_until),
        components: m.components.map((c) => c.name)
      })),
    crowd,
    record,
    window: strip,
    history,
    add: viewer === null
      ? { kind: "signed-out" as const }
      : org === undefined
      ? { kind: "no-organization" as const }
      : !can(org.role, "content.write")
      ? { kind: "read-only" as const, org: { slug: org.slug, name: org.name, role: org.role } }
      : {
        kind: "form" as const,
        org: { slug: org.slug, name: org.name },
        others: organizations.filter((o) => o.slug !== org.slug && can(o.role, "content.write")).map((o) => ({ slug: o.slug, name: o.name })),
        stacks,
        groups: pickableGroups(components)
      }
  }
}

const isUuid = Schema.is(Schema.String.check(Schema.isUUID()))

/** The form's fields, as typed, to show again with the errors. */
const AddFields = Schema.Struct({
  org: Schema.String,
  stack: Schema.String,
  new_stack_name: Schema.String,
  what: Schema.Literals(["source", "components"])
})

/**
 * A crowd report (`intent=report`, reportProblem), or: adds the source, or the ticked components, to a stack of the organization (a new one when asked),
 * through the Stacks service the API's `POST /stacks` and `POST /stacks/{id}/items` use: the same
 * permission (Admin, Member), plan limits, audit log and errors.
 */
export async function action({ request, context, params }: Route.ActionArgs): Promise<AddResult | ReturnType<typeof data<AddResult>> | ReportResult | ReturnType<typeof data<ReportResult>>> {
  const form = await request.formData()
  if (form.get("intent") === "report") return reportProblem(context, request, form, params.key)
  const viewer = await requireCsrf(context, request, form)
  const text = (name: string) => {
    const value = form.get(name)
    return typeof value === "string" ? value : ""
  }
  const values = { stack: text("stack"), new_stack_name: text("new_stack_name"), what: text("what") }
  const fail = (errors: FieldErrors, status = 400) => data<AddResult>({ ok: false, values, errors }, { status })
  const org = viewer.organizations.find((o) => o.slug === text("org"))
  if (org === undefined) return fail({ form: "you are not a member of this organization" }, 403)
  if (!can(org.role, "content.write")) return fail({ form: "your role in this organization cannot change stacks" }, 403)

  const fields = Schema.decodeUnknownResult(AddFields)({ org: org.slug, ...values })
  if (Result.isFailure(fields) || values.stack === "") {
    return fail(values.stack === "" ? { stack: "choose a stack, or a new one" } : { what: "choose the whole source or some components" })
  }
  // One of the stacks offered (their ids), or a new one.
  if (values.stack !== "new" && !isUuid(values.stack)) return fail({ stack: "choose a stack, or a new one" })
  const componentIds = form.getAll("component").filter((v): v is string => typeof v === "string")
  if (values.what === "components" && componentIds.length === 0) return fail({ components: "tick at least one component" })
  const creating = values.stack === "new"
  const create = creating ? decodeForm(StackCreate, { name: values.new_stack_name }) : undefined
  if (create !== undefined && !create.ok) return fail({ new_stack_name: create.errors["name"] ?? "is not a valid name" })

  // Each item is decoded with the API's Schema (a well-formed UUID, the field its kind needs).
  const items = values.what === "source"
    ? [{ kind: "source" as const, source_key: params.key }]
    : componentIds.map((id) => ({ kind: "component" as const, component_id: id }))
  const decodedItems = items.map((item) => Schema.decodeUnknownResult(StackItemAdd)(item))
  if (decodedItems.some(Result.isFailure)) return fail({ components: "a ticked component is not one of this source's" })

  const outcome = await runEffect(context, request, Effect.gen(function*() {
    const principal = yield* Users.use((u) => u.principalFor(viewer.user.id, org.id))
    const stacks = yield* Stacks
    const stack = create !== undefined && create.ok ? yield* stacks.create(principal, create.value) : yield* stacks.get(principal, values.stack)
    let added = 0
    let present = 0
    for (const item of decodedItems) {
      if (Result.isFailure(item)) continue
      const result = yield* stacks.addItem(principal, stack.id, item.success).pipe(
        Effect.map(() => "added" as const),
        Effect.catchTag("Conflict", () => Effect.succeed("present" as const))
      )
      if (result === "added") added++
      else present++
    }
    return { stack: { name: stack.name, slug: stack.slug }, added, present, created: creating }
  }).pipe(Effect.result))
  if (Result.isFailure(outcome)) {
    const e = outcome.failure
    switch (e._tag) {
      case "PlanLimitReached":
        return fail({ form: `${e.message} (plan limit ${e.field})` }, 402)
      case "Conflict":
        return fail(creating ? { new_stack_name: e.message } : fieldError(e, "stack"), 409)
      case "NotFound":
        return fail(e.field === "id" ? { stack: "that stack no longer exists" } : { components: e.message }, 404)
      case "Forbidden":
        return fail({ form: e.message }, 403)
    }
  }
  return { ok: true, org: org.slug, ...outcome.success }
}

const reliabilityWords = [
  ["verified", "Verified format", "read in a known status-page format"],
  ["realtime", "Real-time", "checked more often than once a minute"],
  ["historical", "Incident history", "past incidents are on record"],
  ["regional", "Regional status", "the provider reports status per region"]
] as const

const dateTime = (iso: string) => new Date(iso).toISOString().slice(0, 16).replace("T", " ") + " UTC"
const interval = (seconds: number) => seconds < 60 ? `${seconds} s` : `${seconds / 60} min`

export default function SourcePage({ loaderData, actionData }: Route.ComponentProps) {
  const { source, components, incidents, maintenances, window, history, add, crowd, record } = loaderData
  const reported = actionData !== undefined && "report" in actionData ? actionData : undefined
  const added = actionData !== undefined && !("report" in actionData) ? actionData : undefined
  const [params] = useSearchParams()
  const windowHref = (w: string) => {
    const next = new URLSearchParams(params)
    next.set("window", w)
    return `?${next.toString()}`
  }
  const open = incidents.filter((i) => i.resolved_at === null)
  const recent = incidents.filter((i) => i.resolved_at !== null)
  return (
    <article className="source-page">
      <p className="eyebrow"><Link to="/catalog">Catalog</Link>{source.categories.length > 0 ? ` · ${source.categories.join(" · ")}` : ""}</p>
      <div className="source-head">
        <div>
          <h1>{source.name}</h1>
          {source.description ? <p className="lead">{source.description}</p> : null}
        </div>
        <StatusBadge status={source.status} />
      </div>

      <div className="source-grid">
        <div>
          <section className="panel" aria-labelledby="history-title">
            <h2 id="history-title">Status history</h2>
            <Suspense fallback={<HistorySkeleton window={window} />}>
              <Await resolve={history} errorElement={<p className="muted">History unavailable right now.</p>}>
                {(read) => read === null
                  ? <p className="muted">History unavailable right now.</p>
                  : (
                    <>
                      <p className="uptime">
                        <strong>{percentText(read.source.uptime_30d)}</strong>
                        <span className="muted">{read.source.uptime_30d === null ? "no checks recorded in the last 30 days yet" : "uptime over the last 30 days"}</span>
                        <span className="window-switch">
                          <Link to={windowHref("24h")} aria-current={window === "24h"} preventScrollReset>24 h</Link>
                          <Link to={windowHref("90d")} aria-current={window === "90d"} preventScrollReset>90 days</Link>
                        </span>
                      </p>
                      <p><Link to={`/sources/${source.key}/analytics`}>Uptime and outages over any range</Link></p>
                      <HistoryStrip strip={read.source} label={`${source.name} status over the last ${window === "24h" ? "24 hours" : "90 days"}`} />
                    </>
                  )}
              </Await>
            </Suspense>
          </section>

          <section className="panel" aria-labelledby="incidents-title">
            <h2 id="incidents-title">Incidents</h2>
            {open.length === 0 ? <p className="muted">No open incident.</p> : <Incidents list={open} />}
            {recent.length > 0
              ? (
                <>
                  <h3 className="subhead">Recent</h3>
                  <Incidents list={recent} />
                </>
              )
              : null}
          </section>

          <section className="panel" aria-labelledby="components-title">
            <h2 id="components-title">Components <span className="muted">({source.components_count})</span></h2>
            {components.length === 0 ? <p className="muted">The provider reports no components.</p> : <ComponentTree components={components} />}
          </section>
        </div>

        <div>
          <section className="panel" aria-labelledby="crowd-title">
            <h2 id="crowd-title">Users report problems?</h2>
            <CrowdReport crowd={crowd} record={record} components={pickableGroups(components).flatMap((g) => g.items.map((c) => ({ id: c.id, name: g.group === "" ? c.name : `${g.group} › ${c.name}` })))} result={reported} />
          </section>

          <section className="panel" aria-labelledby="add-title">
            <h2 id="add-title">Add to a stack</h2>
            <AddToStack add={add} source={{ key: source.key, name: source.name }} result={added} />
          </section>

          <section className="panel" aria-labelledby="about-title">
            <h2 id="about-title">About this source</h2>
            <dl className="source-facts">
              <dt>Key</dt>
              <dd><code>{source.key}</code></dd>
              <dt>Checked</dt>
              <dd>{source.last_checked_at === null ? "not yet" : <RelativeTime date={source.last_checked_at} />}, every {interval(source.interval_s)}</dd>
              {source.provider_type ? (<><dt>Format</dt><dd>{source.provider_type}</dd></>) : null}
              <dt>Incidents</dt>
              <dd>{source.incidents_count} recorded</dd>
            </dl>
            {source.status_page_url
              ? <p><a href={source.status_page_url} rel="noopener noreferrer external" target="_blank">Official status page<span className="visually-hidden"> (opens in a new tab)</span> ↗</a></p>
              : null}
            {source.service_url ? <p><a href={source.service_url} rel="noopener noreferrer external" target="_blank">{source.name} website<span className="visually-hidden"> (opens in a new tab)</span> ↗</a></p> : null}
          </section>

          <section className="panel" aria-labelledby="reliability-title">
            <h2 id="reliability-title">Reliability indicators</h2>
            <ul className="indicators">
              {reliabilityWords.map(([field, word, meaning]) => (
                <li key={field}>
                  {source.reliability[field]
                    ? <><span className="yes" aria-hidden="true">✓</span><span><strong>{word}</strong>: {meaning}</span></>
                    : <><span className="no" aria-hidden="true">–</span><span className="off">{word}: no</span></>}
                </li>
              ))}
            </ul>
          </section>

          {source.regions.length > 0
            ? (
              <section className="panel" aria-labelledby="regions-title">
                <h2 id="regions-title">Regions</h2>
                <ul className="regions">
                  {source.regions.map((r) => <li key={r.region}><code>{r.region}</code><StatusBadge status={r.status} /></li>)}
                </ul>
              </section>
            )
            : null}

          <section className="panel" aria-labelledby="maintenance-title">
            <h2 id="maintenance-title">Upcoming maintenance</h2>
            {maintenances.length === 0
              ? <p className="muted">None announced.</p>
              : (
                <ul className="events">
                  {maintenances.map((m) => (
                    <li key={m.id} className="event">
                      <h3>{m.url ? <a href={m.url} rel="noopener noreferrer external" target="_blank">{m.title}</a> : m.title}</h3>
                      <p className="event-meta">
                        <span>{m.status.replace("_", " ")}</span>
                        <span>{dateTime(m.scheduled_for)}{m.scheduled_until ? ` → ${dateTime(m.scheduled_until)}` : ""}</span>
                      </p>
                      {m.components.length > 0 ? <p className="affected muted">Affects {m.components.join(", ")}</p> : null}
                    </li>
                  ))}
                </ul>
              )}
          </section>
        </div>
      </div>
    </article>
  )
}

type Shown = Route.ComponentProps["loaderData"]["incidents"]

function Incidents({ list }: { readonly list: Shown }) {
  return (
    <ul className="events">
      {list.map((i) => (
        <li key={i.id} className={i.resolved_at === null ? "event open" : "event"}>
          <h3>{i.url ? <a href={i.url} rel="noopener noreferrer external" target="_blank">{i.title}</a> : i.title}</h3>
          <p className="event-meta">
            <span className="update-status">{i.status}</span>
            {i.impact !== "none" ? <span>impact: {i.impact}</span> : null}
            <span>started <RelativeTime date={i.started_at} /></span>
            {i.resolved_at ? <span>resolved <RelativeTime date={i.resolved_at} /></span> : null}
            {i.region ? <span>region {i.region}</span> : null}
          </p>
          {i.components.length > 0 ? <p className="affected"><span className="muted">Affected:</span> {i.components.join(", ")}</p> : null}
          {i.updates.length > 0
            ? (
              <details open={i.resolved_at === null}>
                <summary>{i.updates.length} {i.updates.length === 1 ? "update" : "updates"}</summary>
                <ol className="updates" reversed>
                  {i.updates.toReversed().map((u) => (
                    <li key={u.id}>
                      <span className="update-status">{u.status}</span> · <RelativeTime date={u.created_at} />
                      <p>{u.body}</p>
                    </li>
                  ))}
                </ol>
              </details>
            )
            : null}
        </li>
      ))}
    </ul>
  )
}

function HistorySkeleton({ window }: { readonly window: string }) {
  return (
    <div aria-busy="true">
      <p className="uptime"><strong>…</strong><span className="muted">loading the {window === "90d" ? "90-day" : "24-hour"} history</span></p>
      <div className="strip-skeleton" />
    </div>
  )
}
