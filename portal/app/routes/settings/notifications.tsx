import { DeliveryStatus } from "#services/domain/api/Notifications.ts"
import { Alerts } from "#services/orgs/Alerts.ts"
import { Channels } from "#services/orgs/Channels.ts"
import { Effect, Schema } from "effect"
import { data, Form, Link } from "react-router"
import type { Route } from "./+types/notifications.ts"
import alertsStylesheet from "../../components/alerts/alerts.css?url"
import { FormError } from "../../components/Forms.tsx"
import { RelativeTime } from "../../components/RelativeTime.tsx"
import { DeliveryRows } from "../../components/settings/channels/DeliveryRows.tsx"
import stacksStylesheet from "../../components/settings/stacks.css?url"
import { runEffect } from "../../lib/effect.server.ts"
import type { FieldErrors } from "../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../lib/member.server.ts"
import { isUuid } from "./stacks/stacks.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stacksStylesheet }, { rel: "stylesheet", href: alertsStylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `Notification center · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }
]

const statuses = DeliveryStatus.literals
const isStatus = Schema.is(DeliveryStatus)
const pageSize = 50

/**
 * The notification center: deliveries (the API's `GET /deliveries`, newest
 * first, `?status=&channel=&cursor=`) with Retry on failed ones (`POST
 * /deliveries/{id}/retry`), and the latest alerts with their acknowledgement.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const url = new URL(request.url)
  const status = url.searchParams.get("status") ?? ""
  const channel = url.searchParams.get("channel") ?? ""
  const cursor = url.searchParams.get("cursor") ?? undefined
  const filter = {
    status: isStatus(status) ? status : undefined,
    channel_id: isUuid(channel) ? channel : undefined
  }
  const loaded = await runEffect(context, request, Effect.all({
    deliveries: Channels.use((c) => c.deliveries(principal, { limit: pageSize, cursor, ...filter })).pipe(
      // A cursor from another filter or a stale one: the first page.
      Effect.catchTag("InvalidParameter", () => Channels.use((c) => c.deliveries(principal, { limit: pageSize, ...filter })))
    ),
    channels: Channels.use((c) => c.list(principal, { limit: 200 })),
    alerts: Alerts.use((a) => a.list(principal, { limit: 20 }))
  }, { concurrency: 3 }))
  const next = loaded.deliveries.next_cursor
  const query = (extra: Record<string, string>) =>
    `?${new URLSearchParams({ ...(filter.status ? { status: filter.status } : {}), ...(filter.channel_id ? { channel: filter.channel_id } : {}), ...extra })}`
  return {
    organization: { slug: organization.slug, name: organization.name },
    canRetry: allowed["notifications.manage"],
    filter: { status: filter.status ?? "", channel: filter.channel_id ?? "" },
    deliveries: loaded.deliveries.data,
    nextPage: next === null ? null : query({ cursor: next }),
    channels: loaded.channels.data.map((c) => ({ id: c.id, name: c.name })),
    alerts: loaded.alerts.data
  }
}

interface ActionResult {
  readonly errors: FieldErrors
  readonly retried?: string
}

/** Retry a failed delivery (Member): once more, now. */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { principal } = await requireMemberAction(context, request, form, params.org)
  const id = String(form.get("id") ?? "")
  if (form.get("intent") !== "retry" || !isUuid(id)) return data<ActionResult>({ errors: { form: "unknown action" } }, { status: 400 })
  const outcome = await runEffect(context, request, Channels.use((c) => c.retryDelivery(principal, id)).pipe(
    Effect.map((d) => ({ ok: true as const, channel: d.channel.name })),
    Effect.catchTags({
      Conflict: (e) => Effect.succeed({ ok: false as const, message: e.message }),
      NotFound: (e) => Effect.succeed({ ok: false as const, message: e.message })
    })
  ))
  if (!outcome.ok) return data<ActionResult>({ errors: { form: outcome.message } }, { status: 409 })
  return { errors: {}, retried: outcome.channel } satisfies ActionResult
}

const ackWords = (by: string | null) =>
  by === null ? "" : by === "link" ? "with the message's link" : by === "recovered" ? "recovered by itself" : by.startsWith("api_key:") ? "by an API key" : "by a member"

export default function NotificationCenter({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, canRetry, filter, deliveries, nextPage, channels, alerts } = loaderData
  const result = actionData as ActionResult | undefined
  const base = `/settings/${organization.slug}/notifications`
  return (
    <>
      <section className="panel" aria-labelledby="center-title">
        <div className="section-head">
          <h1 id="center-title">Notification center</h1>
          <Link to={`/settings/${organization.slug}/channels`}>Channels</Link>
        </div>
        <p className="muted">Every message statusgrid sent or tried to send, newest first. A failed one can be tried again.</p>
        <Form method="get" className="filters">
          <div className="field">
            <label htmlFor="filter-status">Status</label>
            <select id="filter-status" name="status" defaultValue={filter.status}>
              <option value="">Any</option>
              {statuses.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          </div>
          <div className="field">
            <label htmlFor="filter-channel">Channel</label>
            <select id="filter-channel" name="channel" defaultValue={filter.channel}>
              <option value="">Any</option>
              {channels.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
            </select>
          </div>
          <button type="submit" className="button secondary">Filter</button>
        </Form>
        {result?.retried ? <p className="form-success" role="status">Retrying the delivery to {result.retried} now.</p> : null}
        <FormError message={result?.errors["form"]} />
        <DeliveryRows deliveries={deliveries} org={organization.slug} canRetry={canRetry} showChannel />
        {nextPage === null ? null : <p><Link to={`${base}${nextPage}`}>Older deliveries</Link></p>}
      </section>
      <section className="panel" aria-labelledby="alerts-title">
        <h2 id="alerts-title">Latest alerts</h2>
        {alerts.length === 0
          ? <p className="muted">No alert yet.</p>
          : (
            <ul className="stack-rows">
              {alerts.map((a) => (
                <li key={a.id} className="stack-row">
                  <div>
                    <h3 className="alert-row-title"><Link to={`/alerts/${a.id}`}>{a.title}</Link></h3>
                    <p className="muted">
                      {a.level} · <RelativeTime date={a.created_at} /> ·{" "}
                      {a.acknowledged_at !== null
                        ? <>acknowledged {ackWords(a.acknowledged_by)}</>
                        : a.next_escalation_at !== null
                        ? <strong>escalating, not acknowledged</strong>
                        : "no acknowledgement needed"}
                    </p>
                  </div>
                </li>
              ))}
            </ul>
          )}
      </section>
    </>
  )
}
