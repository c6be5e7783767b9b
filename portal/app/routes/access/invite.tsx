import type { InvitationView } from "#services/domain/api/Members.ts"
import { Members } from "#services/orgs/Members.ts"
import { Effect } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/invite.ts"
import alertsCss from "../../components/alerts/alerts.css?url"
import { CsrfField, FormError } from "../../components/Forms.tsx"
import { runEffect } from "../../lib/effect.server.ts"
import { clientIp } from "../../lib/member.server.ts"
import { optionalUser, requireCsrf } from "../../lib/session.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: alertsCss }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.invitation ? `Join ${loaderData.invitation.organization_name}` : "Invitation not found"} · statusgrid` },
  { name: "robots", content: "noindex" }
]

const roleWords = {
  admin: "Admin: everything, including members and billing",
  member: "Member: stacks, monitors, channels and rules",
  viewer: "Viewer: sees everything, changes nothing"
} as const

/** The invitation of the link (anyone holding the link may see whom it invites to what); an unknown token is a 404 page of its own. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const viewer = await optionalUser(context, request)
  const invitation = await runEffect(context, request, Members.use((m) => m.invitationByToken(params.token)).pipe(
    Effect.catchTag("NotFound", () => Effect.succeed(null))
  ))
  const who = viewer && { email: viewer.user.email, member: viewer.organizations.some((o) => o.slug === invitation?.organization_slug) }
  // Unknown: 404; accepted, revoked or expired: 410 Gone; both with a page that says what happened.
  const status = invitation === null ? 404 : invitation.state === "open" ? 200 : 410
  return data({ invitation, viewer: who, path: `/invite/${encodeURIComponent(params.token)}` }, { status })
}

/** Join: the signed-in person becomes a member with the invited role, then their new dashboard. */
export async function action({ request, context, params }: Route.ActionArgs) {
  const viewer = await requireCsrf(context, request, await request.formData())
  const ip = clientIp(request)
  const result = await runEffect(context, request, Members.use((m) => m.acceptInvitation(viewer.user.id, params.token, ip)).pipe(
    Effect.map((joined) => ({ slug: joined.organization_slug, error: undefined })),
    Effect.catchTags({
      NotFound: (e) => Effect.succeed({ slug: undefined, error: e.message }),
      Conflict: (e) => Effect.succeed({ slug: undefined, error: e.message }),
      PlanLimitReached: (e) => Effect.succeed({ slug: undefined, error: e.message })
    })
  ))
  if (result.slug === undefined) return data({ error: result.error }, { status: 409 })
  throw redirect(`/dashboard/${result.slug}`)
}

const closed: Record<Exclude<InvitationView["state"], "open">, { title: string; text: string }> = {
  accepted: { title: "This invitation was already used", text: "Someone accepted it already. If that was you, sign in and open the organization." },
  revoked: { title: "This invitation was withdrawn", text: "An admin of the organization revoked it. Ask them for a new one." },
  expired: { title: "This invitation has expired", text: "Invitations work for a limited time. Ask an admin of the organization for a new one." }
}

export default function InvitePage({ loaderData, actionData }: Route.ComponentProps) {
  const { invitation, viewer, path } = loaderData
  if (invitation === null) {
    return (
      <section className="panel narrow message-page">
        <p className="eyebrow">Invitation</p>
        <h1>No invitation at this link</h1>
        <p>The link may be incomplete (copy all of it from the e-mail), or the invitation was replaced by a newer one.</p>
        <p className="actions"><Link to="/" className="button">Go to the start page</Link></p>
      </section>
    )
  }
  if (invitation.state !== "open") {
    const words = closed[invitation.state]
    return (
      <section className="panel narrow message-page">
        <p className="eyebrow">Invitation to {invitation.organization_name}</p>
        <h1>{words.title}</h1>
        <p>{words.text}</p>
        <p className="actions">
          {viewer?.member ? <Link to={`/dashboard/${invitation.organization_slug}`} className="button">Open {invitation.organization_name}</Link> : <Link to="/" className="button">Go to the start page</Link>}
        </p>
      </section>
    )
  }
  const next = encodeURIComponent(path)
  return (
    <section className="panel narrow">
      <p className="eyebrow">Invitation</p>
      <h1>Join {invitation.organization_name}</h1>
      <p>
        {invitation.invited_by_name ? <strong>{invitation.invited_by_name}</strong> : "An admin"} invited{" "}
        <strong>{invitation.email}</strong> to join as <strong>{invitation.role}</strong>.
      </p>
      <p className="muted">{roleWords[invitation.role]}.</p>
      <FormError message={actionData?.error} />
      {viewer === null
        ? (
          <>
            <p>Sign in, or create an account, to accept. You come back here afterwards.</p>
            <p className="actions">
              <Link to={`/signin?next=${next}`} className="button">Sign in to accept</Link>
              <Link to={`/signup?next=${next}`}>Create an account</Link>
            </p>
          </>
        )
        : viewer.member
        ? <p className="actions"><Link to={`/dashboard/${invitation.organization_slug}`} className="button">You are a member: open {invitation.organization_name}</Link></p>
        : (
          <Form method="post">
            <CsrfField />
            <p className="muted">Signed in as {viewer.email}.</p>
            <button type="submit" className="button wide">Join {invitation.organization_name} as {invitation.role}</button>
          </Form>
        )}
    </section>
  )
}
