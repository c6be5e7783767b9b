import { InvitationCreate, MemberUpdate } from "#services/domain/api/Members.ts"
import { Members } from "#services/orgs/Members.ts"
import { Effect, Schema } from "effect"
import { data, Form } from "react-router"
import type { Route } from "./+types/team.ts"
import stylesheet from "../../components/settings/team.css?url"
import { CsrfField, Field, FormError } from "../../components/Forms.tsx"
import { roleLabel, RoleSelect } from "../../components/settings/RoleSelect.tsx"
import { runEffect } from "../../lib/effect.server.ts"
import { decodeForm, fieldError, type FieldErrors, formFields } from "../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../lib/member.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Team · ${loaderData?.organization ?? "Settings"} · statusgrid` }]

const uuid = Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" }))
const MemberTarget = Schema.Struct({ user_id: uuid })
const InvitationTarget = Schema.Struct({ id: uuid })

/** Members and open invitations (every role sees them; Admins get the controls). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed, viewer } = await requireMember(context, request, params.org)
  const { members, invitations } = await runEffect(context, request, Effect.gen(function*() {
    const service = yield* Members
    const members = yield* service.list(principal, { limit: 500 })
    const invitations = yield* service.listInvitations(principal, { limit: 500 })
    return { members: members.data, invitations: invitations.data }
  }))
  return { organization: organization.name, slug: organization.slug, members, invitations, manage: allowed["members.manage"], me: viewer.user.id }
}

type Outcome = {
  readonly intent: string
  readonly target?: string | undefined
  readonly values?: Record<string, string>
  readonly errors: FieldErrors
  readonly notice?: string | undefined
}

const failed = (outcome: Outcome) => data(outcome, { status: 400 })

/**
 * One action for the page's forms (`intent`): the Members service the API
 * calls (roles, the last Admin, plan limits, audit log and invitation mail are
 * its own); a Viewer's or Member's forged POST is its 403.
 */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { principal } = await requireMemberAction(context, request, form, params.org)
  const intent = String(form.get("intent") ?? "")
  const run = <E extends { readonly _tag: string; readonly message: string; readonly field?: string | undefined }>(
    effect: Effect.Effect<string, E, Members>,
    target: string | undefined,
    values?: Record<string, string>
  ) =>
    runEffect(context, request, effect.pipe(
      Effect.map((notice): Outcome => ({ intent, target, errors: {}, notice })),
      Effect.catch((e: E) =>
        e._tag === "Forbidden" ? Effect.fail(e) : Effect.succeed<Outcome>({ intent, target, errors: fieldError(e), ...(values ? { values } : {}) })
      )
    )).then((outcome) => (outcome.notice === undefined ? failed(outcome) : outcome))

  if (intent === "role") {
    const fields = formFields(form, ["user_id", "role"])
    const target = decodeForm(MemberTarget, fields)
    const role = decodeForm(MemberUpdate, fields)
    if (!target.ok || !role.ok) return failed({ intent, target: fields["user_id"], errors: { ...(target.ok ? {} : target.errors), ...(role.ok ? {} : role.errors) } })
    return run(
      Members.use((m) => m.update(principal, target.value.user_id, role.value)).pipe(Effect.map((m) => `${m.email} is now ${roleLabel[m.role]}.`)),
      target.value.user_id
    )
  }
  if (intent === "remove") {
    const fields = formFields(form, ["user_id", "email"])
    const target = decodeForm(MemberTarget, fields)
    if (!target.ok) return failed({ intent, target: fields["user_id"], errors: target.errors })
    return run(Members.use((m) => m.remove(principal, target.value.user_id)).pipe(Effect.as(`${fields["email"] || "The member"} was removed.`)), target.value.user_id)
  }
  if (intent === "invite") {
    const fields = formFields(form, ["email", "role"])
    const decoded = decodeForm(InvitationCreate, fields)
    if (!decoded.ok) return failed({ intent, values: fields, errors: decoded.errors })
    return run(
      Members.use((m) => m.invite(principal, decoded.value)).pipe(Effect.map((i) => `Invitation sent to ${i.email}.`)),
      undefined,
      fields
    )
  }
  if (intent === "revoke" || intent === "resend") {
    const fields = formFields(form, ["id"])
    const target = decodeForm(InvitationTarget, fields)
    if (!target.ok) return failed({ intent, target: fields["id"], errors: target.errors })
    const id = target.value.id
    return run(
      Effect.gen(function*() {
        const members = yield* Members
        const open = (yield* members.listInvitations(principal, { limit: 500 })).data.find((i) => i.id === id)
        yield* members.revokeInvitation(principal, id)
        if (intent === "revoke") return `The invitation${open ? ` to ${open.email}` : ""} was revoked.`
        // Resending is a new link (the old one stops working): the same address and role, mailed again.
        if (open === undefined) return "The invitation is no longer open; send a new one."
        const again = yield* members.invite(principal, { email: open.email, role: open.role })
        return `Invitation sent again to ${again.email}.`
      }),
      id
    )
  }
  return failed({ intent, errors: { form: "unknown action" } })
}

export default function Team({ loaderData, actionData }: Route.ComponentProps) {
  const { members, invitations, manage, me } = loaderData
  const errorsFor = (intent: string, target?: string): Record<string, string | undefined> =>
    actionData !== undefined && actionData.intent === intent && (target === undefined || actionData.target === target) ? actionData.errors : {}
  const inviteErrors = errorsFor("invite")
  return (
    <>
      <section className="panel">
        <h1>Team</h1>
        {actionData?.notice ? <p className="notice" role="status">{actionData.notice}</p> : null}
        {actionData?.errors["form"] ? <FormError message={actionData.errors["form"]} /> : null}
        <h2>Members</h2>
        <table className="team-table">
          <thead>
            <tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th>{manage ? <th scope="col">Actions</th> : null}</tr>
          </thead>
          <tbody>
            {members.map((m) => {
              const roleError = errorsFor("role", m.user_id)["role"] ?? errorsFor("remove", m.user_id)["role"]
              return (
                <tr key={m.user_id} data-member={m.email}>
                  <td>{m.name}{m.user_id === me ? <span className="muted"> (you)</span> : null}</td>
                  <td>{m.email}</td>
                  <td>{manage ? (
                    <Form method="post" aria-label={`Role of ${m.email}`}>
                      <CsrfField />
                      <input type="hidden" name="intent" value="role" />
                      <input type="hidden" name="user_id" value={m.user_id} />
                      <RoleSelect id={`role-${m.user_id}`} label={`Role of ${m.email}`} defaultValue={m.role} hideLabel />
                      <button type="submit" className="button small secondary">Change role</button>
                    </Form>
                  ) : roleLabel[m.role]}
                    {roleError ? <p className="row-error" role="alert">{roleError}</p> : null}
                  </td>
                  {manage ? (
                    <td>
                      <Form method="post">
                        <CsrfField />
                        <input type="hidden" name="intent" value="remove" />
                        <input type="hidden" name="user_id" value={m.user_id} />
                        <input type="hidden" name="email" value={m.email} />
                        <button type="submit" className="button small danger" aria-label={`Remove ${m.email}`}>Remove</button>
                      </Form>
                    </td>
                  ) : null}
                </tr>
              )
            })}
          </tbody>
        </table>
      </section>

      <section className="panel">
        <h2>Open invitations</h2>
        {invitations.length === 0 ? <p className="muted">No open invitations.</p> : (
          <table className="team-table">
            <thead>
              <tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Expires</th>{manage ? <th scope="col">Actions</th> : null}</tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr key={i.id} data-invitation={i.email}>
                  <td>{i.email}</td>
                  <td>{roleLabel[i.role]}</td>
                  <td><time dateTime={i.expires_at}>{i.expires_at.slice(0, 16).replace("T", " ")} UTC</time></td>
                  {manage ? (
                    <td>
                      <Form method="post">
                        <CsrfField />
                        <input type="hidden" name="id" value={i.id} />
                        <button type="submit" name="intent" value="resend" className="button small secondary" aria-label={`Resend the invitation to ${i.email}`}>Resend</button>
                        <button type="submit" name="intent" value="revoke" className="button small danger" aria-label={`Revoke the invitation to ${i.email}`}>Revoke</button>
                      </Form>
                      {errorsFor("revoke", i.id)["id"] ?? errorsFor("resend", i.id)["id"] ?? errorsFor("resend", i.id)["email"]
                        ? <p className="row-error" role="alert">{errorsFor("revoke", i.id)["id"] ?? errorsFor("resend", i.id)["id"] ?? errorsFor("resend", i.id)["email"]}</p>
                        : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {manage ? (
          <>
            <h2>Invite someone</h2>
            <p className="muted">They receive an e-mail with a link that works once, until the invitation expires (see Expires under Open invitations).</p>
            <Form method="post" noValidate className="inline-form">
              <CsrfField />
              <input type="hidden" name="intent" value="invite" />
              <Field name="email" label="E-mail" type="email" autoComplete="off" defaultValue={actionData?.intent === "invite" ? actionData.values?.["email"] : undefined} error={inviteErrors["email"] ?? inviteErrors["max_users"]} />
              <RoleSelect id="invite-role" label="Role" defaultValue={actionData?.intent === "invite" ? actionData.values?.["role"] : "member"} error={inviteErrors["role"]} />
              <div className="field"><button type="submit" className="button">Send invitation</button></div>
            </Form>
          </>
        ) : null}
      </section>
    </>
  )
}
