import { Organizations } from "#services/orgs/Organizations.ts"
import { Effect } from "effect"
import { data, Form, Link } from "react-router"
import type { Route } from "./+types/audit.ts"
import stylesheet from "../../components/settings/team.css?url"
import { Field } from "../../components/Forms.tsx"
import { runEffect } from "../../lib/effect.server.ts"
import { requireMember } from "../../lib/member.server.ts"
import { recordTypes } from "../../components/settings/recordTypes.ts"
import { actorLabel, actorsOf, auditFilterOf, json } from "./audit.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Audit log · ${loaderData?.organization ?? "Settings"} · statusgrid` }]

/**
 * The audit log (Admin: the service's `audit.view`, a 403 page for others),
 * filtered by actor, record type and days; each entry with its before and after.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal } = await requireMember(context, request, params.org)
  const url = new URL(request.url)
  const { values, filter, errors } = auditFilterOf(url)
  const cursor = url.searchParams.get("cursor") ?? undefined
  const result = await runEffect(context, request, Effect.gen(function*() {
    const page = filter === undefined
      ? { data: [], next_cursor: null }
      : yield* Organizations.use((o) => o.auditLog(principal, { limit: 100, cursor }, filter))
    const actors = yield* actorsOf(principal)
    return { page, actors }
  }).pipe(Effect.catchTag("InvalidParameter", (e) => Effect.succeed({ page: undefined, actors: [], cursorError: e.message }))))
  const body = {
    organization: organization.name,
    slug: organization.slug,
    values,
    errors: "cursorError" in result ? { cursor: String(result.cursorError) } : errors,
    actors: result.actors,
    entries: (result.page?.data ?? []).map((e) => ({ ...e, actorLabel: actorLabel(e, result.actors), before: json(e.before), after: json(e.after) })),
    next: result.page?.next_cursor ?? null
  }
  return Object.keys(body.errors).length > 0 ? data(body, { status: 400 }) : body
}

const pretty = (text: string) => (text === "" ? "—" : JSON.stringify(JSON.parse(text), null, 2))

const short = (value: unknown) => (value === undefined ? "—" : typeof value === "string" ? value : JSON.stringify(value))

/** The fields that differ between before and after (both objects), or every field of the one that exists. */
const changes = (before: string, after: string): ReadonlyArray<{ readonly field: string; readonly from: string; readonly to: string }> => {
  if (before === "" || after === "") return []
  const b = before === "" ? {} : JSON.parse(before) as unknown
  const a = after === "" ? {} : JSON.parse(after) as unknown
  if (typeof b !== "object" || b === null || typeof a !== "object" || a === null || Array.isArray(a) || Array.isArray(b)) {
    return [{ field: "value", from: short(b), to: short(a) }]
  }
  const bo = b as Record<string, unknown>
  const ao = a as Record<string, unknown>
  return [...new Set([...Object.keys(bo), ...Object.keys(ao)])]
    .filter((k) => JSON.stringify(bo[k]) !== JSON.stringify(ao[k]))
    .map((k) => ({ field: k, from: short(bo[k]), to: short(ao[k]) }))
}

export default function AuditLog({ loaderData }: Route.ComponentProps) {
  const { values, errors, actors, entries, next, slug } = loaderData
  const query = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== ""))
  const e: Record<string, string | undefined> = errors
  return (
    <section className="panel">
      <div className="page-head">
        <h1>Audit log</h1>
        <a className="button secondary" href={`/settings/${slug}/audit.csv${query.size > 0 ? `?${query}` : ""}`} download>Export CSV</a>
      </div>
      <p className="muted">Every change to this organization, oldest first: who made it, and the record before and after.</p>
      <Form method="get" className="inline-form" aria-label="Filter the audit log">
        <div className="field">
          <label htmlFor="filter-actor">Actor</label>
          <select id="filter-actor" name="actor" defaultValue={values.actor} aria-invalid={e["actor"] ? true : undefined}>
            <option value="">Anyone</option>
            {actors.map((a) => <option key={a.id} value={a.id}>{a.label}</option>)}
          </select>
          {e["actor"] ? <p className="field-error">Actor {e["actor"]}</p> : null}
        </div>
        <div className="field">
          <label htmlFor="filter-type">Record type</label>
          <select id="filter-type" name="type" defaultValue={values.type} aria-invalid={e["type"] ? true : undefined} aria-describedby={e["type"] ? "filter-type-error" : undefined}>
            <option value="">Any</option>
            {recordTypes.map((t) => <option key={t} value={t}>{t.replaceAll("_", " ")}</option>)}
          </select>
          {e["type"] ? <p className="field-error" id="filter-type-error">Record type {e["type"]}</p> : null}
        </div>
        <Field name="from" label="From" type="date" defaultValue={values.from} error={e["from"]} required={false} />
        <Field name="to" label="To" type="date" defaultValue={values.to} error={e["to"]} required={false} />
        <div className="field"><button type="submit" className="button">Filter</button></div>
      </Form>
      {e["cursor"] ? <p className="form-error" role="alert">This page of the log is no longer valid; <Link to="?">start again</Link>.</p> : null}
      {entries.length === 0 ? <p className="muted">No entries{query.size > 0 ? " match this filter" : ""}.</p> : (
        <table className="team-table audit-table">
          <thead>
            <tr><th scope="col">When</th><th scope="col">Actor</th><th scope="col">Change</th><th scope="col">Before → after</th></tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.id} className="audit-entry" data-action={entry.action}>
                <td><time dateTime={entry.created_at}>{entry.created_at.slice(0, 19).replace("T", " ")} UTC</time></td>
                <td>{entry.actorLabel}{entry.ip ? <span className="muted"> · {entry.ip}</span> : null}</td>
                <td><code>{entry.action}</code><br /><span className="muted">{entry.entity_type} {entry.entity_id ?? ""}</span></td>
                <td>
                  {entry.before === "" && entry.after !== "" ? <p className="audit-changes">Created</p> : null}
                  {entry.after === "" && entry.before !== "" ? <p className="audit-changes">Deleted</p> : null}
                  <ul className="audit-changes">
                    {changes(entry.before, entry.after).map((c) => (
                      <li key={c.field}><code>{c.field}</code>: <del>{c.from}</del> → <ins>{c.to}</ins></li>
                    ))}
                  </ul>
                  <details>
                    <summary>Full records</summary>
                    <div className="audit-records">
                      <div><p className="eyebrow">Before</p><pre data-before>{pretty(entry.before)}</pre></div>
                      <div><p className="eyebrow">After</p><pre data-after>{pretty(entry.after)}</pre></div>
                    </div>
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next !== null ? (
        <p><Link to={`?${new URLSearchParams([...query, ["cursor", next]])}`}>Later entries</Link></p>
      ) : null}
    </section>
  )
}
