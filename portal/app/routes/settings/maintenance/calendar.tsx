import { MaintenanceCalendar } from "#services/orgs/MaintenanceCalendar.ts"
import { MaintenanceWindows } from "#services/orgs/MaintenanceWindows.ts"
import { Stacks } from "#services/orgs/Stacks.ts"
import { Effect } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/calendar.ts"
import { CsrfField, FormError } from "../../../components/Forms.tsx"
import { type CalendarDay, monthGrid, monthOf, type MonthRef, shiftMonth } from "../../../components/settings/maintenance/month.ts"
import { WindowFields } from "../../../components/settings/maintenance/WindowForm.tsx"
import stylesheet from "../../../components/settings/maintenance/maintenance.css?url"
import stacksStylesheet from "../../../components/settings/stacks.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import { type FieldErrors, fieldError } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { decodeWindowForm } from "./window.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stacksStylesheet }, { rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `Maintenance calendar · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }
]

const dayMs = 86_400_000
/** The list view: from a week back to half a year ahead. */
const listPastMs = 7 * dayMs
const listFutureMs = 183 * dayMs

/**
 * The maintenance calendar: the organization's windows and its providers'
 * announced maintenances (MaintenanceCalendar, the same rows as the iCal
 * feed), as a month (`?month=YYYY-MM`, UTC) or a list (`?view=list`); the
 * new-window form (the API's `POST /maintenance-windows`); the feed's URL.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const url = new URL(request.url)
  const now = new Date()
  const view = url.searchParams.get("view") === "list" ? "list" as const : "month" as const
  const month = monthOf(url.searchParams.get("month"), now)
  const grid = monthGrid(month)
  const [from, to] = view === "list"
    ? [new Date(now.getTime() - listPastMs), new Date(now.getTime() + listFutureMs)]
    : [new Date(grid[0]![0]!.start), new Date(grid.at(-1)!.at(-1)!.start + dayMs)]
  const loaded = await runEffect(context, request, Effect.all({
    entries: MaintenanceCalendar.use((c) => c.entries(principal, from, to, url.origin)),
    feed: MaintenanceCalendar.use((c) => c.feed(principal)),
    stacks: Stacks.use((s) => s.list(principal, { limit: 100 }))
  }, { concurrency: 3 }))
  return {
    organization: { slug: organization.slug, name: organization.name },
    canWrite: allowed["content.write"],
    origin: url.origin,
    view,
    month,
    grid,
    now: now.toISOString(),
    entries: loaded.entries,
    feed: loaded.feed,
    stacks: loaded.stacks.data.map((s) => ({ id: s.id, name: s.name })),
    created: url.searchParams.get("created")
  }
}

interface ActionResult {
  readonly intent: string
  readonly errors: FieldErrors
  readonly values?: ReturnType<typeof decodeWindowForm>["values"]
  readonly feed?: "created" | "revoked" | "none"
}

/** New window (MaintenanceWindows.create, as the API), a new feed URL, or no feed. */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  const intent = String(form.get("intent") ?? "")
  if (intent === "feed-create") {
    await runEffect(context, request, MaintenanceCalendar.use((c) => c.createFeed(principal)))
    return { intent, errors: {}, feed: "created" } satisfies ActionResult
  }
  if (intent === "feed-revoke") {
    const revoked = await runEffect(context, request, MaintenanceCalendar.use((c) => c.revokeFeed(principal)))
    return { intent, errors: {}, feed: revoked ? "revoked" : "none" } satisfies ActionResult
  }
  if (intent !== "create") return data<ActionResult>({ intent: "unknown", errors: { form: "unknown action" } }, { status: 400 })
  const decoded = decodeWindowForm(form)
  if (!decoded.ok) return data<ActionResult>({ intent, errors: decoded.errors, values: decoded.values }, { status: 400 })
  const outcome = await runEffect(context, request, MaintenanceWindows.use((w) => w.create(principal, decoded.value)).pipe(
    Effect.map((w) => ({ ok: true as const, window: w })),
    Effect.catchTags({
      NotFound: (e) => Effect.succeed({ ok: false as const, errors: fieldError(e, "stack_id") }),
      InvalidParameter: (e) => Effect.succeed({ ok: false as const, errors: fieldError(e) })
    })
  ))
  if (!outcome.ok) return data<ActionResult>({ intent, errors: outcome.errors, values: decoded.values }, { status: 400 })
  // To the month of the new window, which then shows it.
  return redirect(`/settings/${organization.slug}/maintenance?month=${outcome.window.starts_at.slice(0, 7)}&created=${outcome.window.id}`)
}

type Entry = Route.ComponentProps["loaderData"]["entries"][number]

const utcTime = (iso: string) => `${iso.slice(11, 16)}`
const utcDateTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`
const monthLabel = (month: MonthRef) =>
  new Date(Date.UTC(month.year, month.month - 1, 1)).toLocaleDateString("en-GB", { month: "long", year: "numeric", timeZone: "UTC" })
const monthParam = (month: MonthRef) => `${month.year}-${String(month.month).padStart(2, "0")}`
const weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

const overlaps = (entry: Entry, day: CalendarDay) => {
  const start = Date.parse(entry.starts_at)
  const end = entry.ends_at === null ? start + 3600_000 : Date.parse(entry.ends_at)
  return start < day.start + dayMs && end > day.start
}

function EntryLink({ entry, org }: { readonly entry: Entry; readonly org: string }) {
  const label = entry.kind === "window" ? entry.title : `${entry.scope}: ${entry.title}`
  const href = entry.kind === "window" ? `/settings/${org}/maintenance/${entry.uid.slice("window-".length)}` : entry.url ?? "#"
  return entry.kind === "window"
    ? <Link to={href}>{label}</Link>
    : <a href={href} rel="noreferrer noopener" target="_blank">{label}</a>
}

function MonthView({ grid, entries, org, month, now }: {
  readonly grid: ReadonlyArray<ReadonlyArray<CalendarDay>>
  readonly entries: ReadonlyArray<Entry>
  readonly org: string
  readonly month: MonthRef
  readonly now: string
}) {
  const today = now.slice(0, 10)
  return (
    // Scrolls sideways on a phone: focusable, so that the keyboard scrolls it too.
    <div className="month-scroll" role="region" aria-label={`${monthLabel(month)}, scrollable`} tabIndex={0}>
      <table className="month">
        <caption>{monthLabel(month)} (times in UTC)</caption>
        <thead>
          <tr>{weekdays.map((d) => <th key={d} scope="col"><abbr title={d}>{d.slice(0, 3)}</abbr></th>)}</tr>
        </thead>
        <tbody>
          {grid.map((week) => (
            <tr key={week[0]!.date}>
              {week.map((day) => {
                const here = entries.filter((e) => overlaps(e, day))
                return (
                  <td key={day.date} className={[day.inMonth ? "" : "outside", day.date === today ? "today" : ""].join(" ").trim() || undefined}>
                    <span className="day-number" aria-label={day.date}>{Number(day.date.slice(8))}</span>
                    {here.length === 0 ? null : (
                      <ul className="day-entries">
                        {here.map((e) => (
                          <li key={e.uid} className={`entry entry-${e.kind}${e.cancelled ? " cancelled" : ""}`}>
                            <span className="entry-time">{e.starts_at.slice(0, 10) === day.date ? utcTime(e.starts_at) : "…"}</span> <EntryLink entry={e} org={org} />
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                )
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function ListView({ entries, org, now }: { readonly entries: ReadonlyArray<Entry>; readonly org: string; readonly now: string }) {
  if (entries.length === 0) return <p>Nothing from a week ago to six months ahead.</p>
  const at = Date.parse(now)
  return (
    <ul className="entry-list">
      {entries.map((e) => {
        const ends = e.ends_at === null ? null : Date.parse(e.ends_at)
        const state = e.cancelled ? "cancelled" : Date.parse(e.starts_at) > at ? "upcoming" : ends !== null && ends <= at ? "past" : "now"
        return (
          <li key={e.uid} className={`entry-row entry-${e.kind}`}>
            <div>
              <h3><EntryLink entry={e} org={org} /></h3>
              <p className="muted">
                {utcDateTime(e.starts_at)} → {e.ends_at === null ? "end not announced" : utcDateTime(e.ends_at)} ·{" "}
                {e.kind === "window" ? <>your window, covers {e.scope}</> : <>announced by the provider</>}
              </p>
            </div>
            <span className={`pill pill-${state}`}>{state === "now" ? "in progress" : state}</span>
          </li>
        )
      })}
    </ul>
  )
}

export default function MaintenanceCalendarPage({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, canWrite, origin, view, month, grid, entries, feed, stacks, now, created } = loaderData
  const result = actionData as ActionResult | undefined
  const base = `/settings/${organization.slug}/maintenance`
  const createErrors = result?.intent === "create" ? result.errors : {}
  const feedUrl = feed === null ? null : `${origin}${feed.path}`
  const createdEntry = created === null ? undefined : entries.find((e) => e.uid === `window-${created}`)
  return (
    <>
      <section className="panel" aria-labelledby="calendar-title">
        <div className="section-head">
          <h1 id="calendar-title">Maintenance calendar</h1>
          <nav aria-label="Calendar view" className="view-switch">
            <Link to={`${base}?month=${monthParam(month)}`} aria-current={view === "month" ? "page" : undefined}>Month</Link>
            <Link to={`${base}?view=list`} aria-current={view === "list" ? "page" : undefined}>List</Link>
          </nav>
        </div>
        <p className="muted">
          Your maintenance windows (alerts about what they cover are held while they are open) and the maintenances your
          providers announced for the sources your stacks show.
        </p>
        {createdEntry ? <p className="form-success" role="status">Created {createdEntry.title}.</p> : null}
        {view === "month"
          ? (
            <>
              <nav aria-label="Months" className="month-nav">
                <Link to={`${base}?month=${monthParam(shiftMonth(month, -1))}`}>← {monthLabel(shiftMonth(month, -1))}</Link>
                <Link to={`${base}?month=${monthParam(shiftMonth(month, 1))}`}>{monthLabel(shiftMonth(month, 1))} →</Link>
              </nav>
              <MonthView grid={grid} entries={entries} org={organization.slug} month={month} now={now} />
            </>
          )
          : <ListView entries={entries} org={organization.slug} now={now} />}
        <p className="legend muted"><span className="swatch entry-window" aria-hidden="true" /> your windows · <span className="swatch entry-provider" aria-hidden="true" /> providers’ maintenances</p>
      </section>

      {canWrite
        ? (
          <section className="panel" aria-labelledby="window-create-title">
            <h2 id="window-create-title">New maintenance window</h2>
            <Form method="post" className="stack-form window-form" key={created ?? "new"}>
              <CsrfField />
              <input type="hidden" name="intent" value="create" />
              <FormError message={createErrors["form"]} />
              <WindowFields values={result?.intent === "create" ? result.values : undefined} errors={createErrors} stacks={stacks} guessZone={result?.intent !== "create"} />
              <button type="submit" className="button">Create window</button>
            </Form>
          </section>
        )
        : <p className="muted read-only">Your role can view the calendar but not change it.</p>}

      <section className="panel" aria-labelledby="feed-title">
        <h2 id="feed-title">Calendar subscription (iCal)</h2>
        <p className="muted">
          Subscribe from Google Calendar, Outlook or Apple Calendar: the feed holds this calendar from 90 days back to a year
          ahead and updates itself. Anyone with the address can read it; a new address stops the old one at once.
        </p>
        {result?.feed === "created" ? <p className="form-success" role="status">A new subscription address is ready; the previous one no longer works.</p> : null}
        {result?.feed === "revoked" ? <p className="form-success" role="status">The subscription address was revoked: it answers 404.</p> : null}
        {feedUrl === null
          ? <p>No subscription address yet.</p>
          : (
            <>
              <p className="share-url"><a href={feedUrl} data-testid="calendar-feed">{feedUrl}</a></p>
              <p className="muted">In calendar apps that ask for it: <code>{feedUrl.replace(/^https?:/, "webcal:")}</code></p>
            </>
          )}
        {canWrite
          ? (
            <Form method="post" className="inline-actions">
              <CsrfField />
              <button type="submit" name="intent" value="feed-create" className="button small">{feedUrl === null ? "Create subscription address" : "New address"}</button>
              {feedUrl === null ? null : <button type="submit" name="intent" value="feed-revoke" className="button small secondary">Revoke address</button>}
            </Form>
          )
          : null}
      </section>
    </>
  )
}
