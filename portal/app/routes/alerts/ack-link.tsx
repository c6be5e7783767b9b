import { Alerts } from "#services/orgs/Alerts.ts"
import { Effect } from "effect"
import { data, Form, Link } from "react-router"
import type { Route } from "./+types/ack-link.ts"
import { LevelBadge, plainTitle } from "../../components/alerts/ChangeStatus.tsx"
import alertsCss from "../../components/alerts/alerts.css?url"
import { RelativeTime } from "../../components/RelativeTime.tsx"
import { runEffect } from "../../lib/effect.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: alertsCss }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.view ? `Acknowledge: ${plainTitle(loaderData.view.title)}` : "Acknowledgment link expired"} · statusgrid` },
  { name: "robots", content: "noindex" }
]

const tokenOf = (request: Request, form?: FormData) => {
  const posted = form?.get("token")
  return typeof posted === "string" && posted !== "" ? posted : new URL(request.url).searchParams.get("token") ?? ""
}

/**
 * The signed link in an escalating alert's message (ALERT_ACK_LINK_TTL_S):
 * no sign-in, the token is the authority. Opening it acknowledges nothing
 * (mail scanners and chat previews open links); the button POSTs. A wrong
 * token is the 404 page; an expired link says so (410) and points to the
 * alert's page, where a signed-in member can still acknowledge.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const token = tokenOf(request)
  const result = await runEffect(context, request, Alerts.use((a) => a.linkView(params.id, token)).pipe(
    Effect.map((view) => ({ view, token, expired: null })),
    Effect.catchTag("LinkExpired", (e) => Effect.succeed({ view: null, token: "", expired: e.message }))
  ))
  return result.view === null ? data(result, { status: 410 }) : result
}

export async function action({ request, context, params }: Route.ActionArgs) {
  const token = tokenOf(request, await request.formData())
  const result = await runEffect(context, request, Alerts.use((a) => a.acknowledgeByLink(params.id, token)).pipe(
    Effect.map(() => ({ expired: null })),
    Effect.catchTag("LinkExpired", (e) => Effect.succeed({ expired: e.message }))
  ))
  return result.expired === null ? result : data(result, { status: 410 })
}

export default function AckLinkPage({ loaderData, params }: Route.ComponentProps) {
  const { view, token } = loaderData
  if (view === null) {
    return (
      <section className="panel narrow message-page">
        <p className="eyebrow">Link expired</p>
        <h1>This acknowledgment link has expired</h1>
        <p>Links in alert messages work for a limited time. Sign in to see the alert and acknowledge it there.</p>
        <p className="actions"><Link to={`/alerts/${params.id}`} className="button">Open the alert</Link></p>
      </section>
    )
  }
  return (
    <section className="panel narrow alert-head">
      <p className="eyebrow">Acknowledge an alert</p>
      <h1>{plainTitle(view.title)}</h1>
      <p className="alert-meta">
        <LevelBadge level={view.level} />
        <span>Raised <RelativeTime date={view.created_at} /></span>
      </p>
      {view.acknowledged_at !== null
        ? (
          <p className="ack-done tone-ok" role="status">
            <span aria-hidden="true">✓</span>
            Acknowledged <RelativeTime date={view.acknowledged_at} />
          </p>
        )
        : (
          <Form method="post">
            <input type="hidden" name="token" value={token} />
            <p>Acknowledging stops the escalation: no further step is sent.</p>
            <button type="submit" className="button wide">Acknowledge and stop the escalation</button>
          </Form>
        )}
      <p className="muted"><Link to={`/alerts/${params.id}`}>See the whole alert</Link> (sign-in required)</p>
    </section>
  )
}
