import { can } from "#services/domain/Permissions.ts"
import { Users } from "#services/identity/Users.ts"
import { Alerts } from "#services/orgs/Alerts.ts"
import { Effect } from "effect"
import { Form, Link } from "react-router"
import type { Route } from "./+types/alert.ts"
import { ChangeStatus, LevelBadge, plainTitle, shownText } from "../../components/alerts/ChangeStatus.tsx"
import { DueIn } from "../../components/alerts/DueIn.tsx"
import { DeliveryTable } from "../../components/alerts/DeliveryTable.tsx"
import alertsCss from "../../components/alerts/alerts.css?url"
import { CsrfField } from "../../components/Forms.tsx"
import { RelativeTime } from "../../components/RelativeTime.tsx"
import { runEffect } from "../../lib/effect.server.ts"
import { requireCsrf, requireUser } from "../../lib/session.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: alertsCss }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${plainTitle(loaderData?.detail.alert.title ?? "") || "Alert"} · statusgrid` },
  { name: "robots", content: "noindex" }
]

/**
 * The alert as its organization's member sees it: the alert's organization is
 * looked up first, then the viewer's role in it (a person who is not a member
 * gets the 404 page, as for an alert that does not exist). Signed out: sign in,
 * then back here (`requireUser`).
 */
const alertFor = (userId: string, id: string) =>
  Effect.gen(function*() {
    const alerts = yield* Alerts
    const organizationId = yield* alerts.organizationOf(id)
    const principal = yield* Users.use((u) => u.principalFor(userId, organizationId))
    return { principal, alerts }
  })

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const viewer = await requireUser(context, request)
  return runEffect(context, request, Effect.gen(function*() {
    const { principal, alerts } = yield* alertFor(viewer.user.id, params.id)
    const detail = yield* alerts.detail(principal, params.id)
    return { detail, canAcknowledge: can(principal.role, "notifications.manage") }
  }))
}

/** Acknowledge (Admin, Member): the escalation stops; the first acknowledgment stands. */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const viewer = await requireCsrf(context, request, form)
  await runEffect(context, request, Effect.gen(function*() {
    const { principal, alerts } = yield* alertFor(viewer.user.id, params.id)
    return yield* alerts.acknowledge(principal, params.id)
  }))
  return { acknowledged: true }
}

const byWho = (by: string | null) =>
  by === null ? "" : by === "link" ? " through the link in the message" : by === "recovered" ? ": the subject recovered" : by.startsWith("api_key:") ? " with an API key" : " by a member"

export default function AlertPage({ loaderData }: Route.ComponentProps) {
  const { detail, canAcknowledge } = loaderData
  const { alert, change } = detail
  const dashboard = `/dashboard/${detail.organization_slug}`
  const where = detail.stack === null ? dashboard : `${dashboard}/stacks/${detail.stack.slug}`
  const escalating = alert.next_escalation_at !== null
  return (
    <article className="alert-page">
      <header className="panel alert-head">
        <p className="eyebrow">Alert · {alert.trigger.replaceAll("_", " ")}</p>
        <h1>{plainTitle(alert.title) || change.name}</h1>
        <p className="alert-meta">
          <LevelBadge level={alert.level} />
          <span>Raised <RelativeTime date={alert.created_at} /></span>
          {detail.stack === null ? null : <span>in <Link to={where}>{detail.stack.name}</Link></span>}
        </p>
        {change.previous_status === "" && change.current_status === ""
          ? null
          : (
            <p className="alert-change">
              <strong>{change.name}</strong>
              <ChangeStatus value={change.previous_status} />
              <span className="arrow" aria-label="changed to">→</span>
              <ChangeStatus value={change.current_status} />
              <span className="muted"><RelativeTime date={change.at} /></span>
            </p>
          )}
      </header>

      {detail.escalates
        ? (
          <section className="panel ack-box" aria-labelledby="ack-title">
            <h2 id="ack-title" className="visually-hidden">Acknowledgment</h2>
            {alert.acknowledged_at !== null
              ? (
                <p className="ack-done tone-ok" role="status">
                  <span aria-hidden="true">✓</span>
                  Acknowledged <RelativeTime date={alert.acknowledged_at} />{byWho(alert.acknowledged_by)}
                </p>
              )
              : (
                <>
                  <p>
                    {escalating
                      ? <>Escalating: step {alert.escalation_step + 1} is due <DueIn date={alert.next_escalation_at!} />.</>
                      : <>Not acknowledged; every escalation step has been sent.</>}
                  </p>
                  {canAcknowledge
                    ? (
                      <Form method="post">
                        <CsrfField />
                        <button type="submit" className="button">Acknowledge</button>
                      </Form>
                    )
                    : <p className="muted">Viewers cannot acknowledge; ask a member.</p>}
                </>
              )}
          </section>
        )
        : null}

      <section className="panel" aria-labelledby="what-title">
        <h2 id="what-title">What was sent</h2>
        <dl className="alert-facts">
          <dt>Rule</dt>
          <dd>{detail.rule_name ?? <span className="muted">deleted since</span>}</dd>
          <dt>Shown in</dt>
          <dd><Link to={where}>{detail.stack === null ? "the dashboard" : detail.stack.name}</Link></dd>
          <dt>When</dt>
          <dd><RelativeTime date={alert.created_at} /></dd>
        </dl>
        {detail.text === "" ? null : <p className="alert-text">{shownText(detail.text)}</p>}
      </section>

      <section className="panel" aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Channels</h2>
        <DeliveryTable deliveries={detail.deliveries} />
      </section>
    </article>
  )
}
