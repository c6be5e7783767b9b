import { PasswordChange, ProfileName } from "#services/domain/api/Account.ts"
import { Sessions } from "#services/identity/Sessions.ts"
import { Users } from "#services/identity/Users.ts"
import { Effect } from "effect"
import { data, Form } from "react-router"
import type { Route } from "./+types/profile.ts"
import stylesheet from "../components/settings/team.css?url"
import { CsrfField, Field, FormError } from "../components/Forms.tsx"
import { PushDevices } from "../components/profile/PushDevices.tsx"
import { runEffect } from "../lib/effect.server.ts"
import { decodeForm, fieldError, type FieldErrors, formFields } from "../lib/forms.server.ts"
import { pushDevices, removeDevice, subscribeDevice } from "../lib/pushDevices.server.ts"
import { requireCsrf, requireUser } from "../lib/session.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = () => [{ title: "Profile · statusgrid" }]

const providerNames: Readonly<Record<string, string>> = { google: "Google", microsoft: "Microsoft" }

/** The signed-in person's own settings (no organization): name, password, linked sign-ins, push devices, other sessions. */
export async function loader({ request, context }: Route.LoaderArgs) {
  const viewer = await requireUser(context, request)
  const [identities, push] = await Promise.all([
    runEffect(context, request, Users.use((u) => u.identitiesOf(viewer.user.id))),
    pushDevices(context, request, viewer)
  ])
  return {
    name: viewer.user.name,
    email: viewer.user.email,
    identities: identities.map((i) => ({ provider: providerNames[i.provider] ?? i.provider, linked_at: i.linked_at })),
    push
  }
}

type Outcome = { readonly intent: string; readonly errors: FieldErrors; readonly values?: Record<string, string>; readonly notice?: string }

const bad = (outcome: Outcome) => data(outcome, { status: 400 })

export async function action({ request, context }: Route.ActionArgs) {
  const form = await request.formData()
  const viewer = await requireCsrf(context, request, form)
  const intent = String(form.get("intent") ?? "")
  if (intent === "name") {
    const fields = formFields(form, ["name"])
    const decoded = decodeForm(ProfileName, fields)
    if (!decoded.ok) return bad({ intent, values: fields, errors: decoded.errors })
    const result = await runEffect(context, request, Users.use((u) => u.rename(viewer.user.id, decoded.value.name)).pipe(
      Effect.map((): Outcome => ({ intent, errors: {}, notice: "Your name was changed." })),
      Effect.catchTag("InvalidParameter", (e) => Effect.succeed<Outcome>({ intent, values: fields, errors: fieldError(e, "name") }))
    ))
    return result.notice === undefined ? bad(result) : result
  }
  if (intent === "password") {
    // Passwords are never sent back into the form.
    const fields = formFields(form, ["current_password", "new_password"])
    const decoded = decodeForm(PasswordChange, fields)
    if (!decoded.ok) return bad({ intent, errors: decoded.errors })
    const result = await runEffect(context, request, Effect.gen(function*() {
      yield* Users.use((u) => u.changePassword(viewer.user.id, decoded.value.current_password, decoded.value.new_password))
      // A new password ends the other sessions: whoever knew the old one is signed out.
      const ended = yield* Sessions.use((s) => s.destroyOthersOf(viewer.user.id, viewer.session.id))
      return { intent, errors: {}, notice: `Your password was changed${ended > 0 ? `; ${ended} other session${ended === 1 ? " was" : "s were"} signed out` : ""}.` } as Outcome
    }).pipe(Effect.catchTag("InvalidParameter", (e) => Effect.succeed<Outcome>({ intent, errors: fieldError(e, "current_password") }))))
    return result.notice === undefined ? bad(result) : result
  }
  if (intent === "sessions") {
    const ended = await runEffect(context, request, Sessions.use((s) => s.destroyOthersOf(viewer.user.id, viewer.session.id)))
    return { intent, errors: {}, notice: ended === 0 ? "No other sessions were open." : `Signed out of ${ended} other session${ended === 1 ? "" : "s"}.` } satisfies Outcome
  }
  if (intent === "push-subscribe" || intent === "push-remove") {
    const outcome = await (intent === "push-subscribe" ? subscribeDevice : removeDevice)(context, request, viewer, form)
    return Object.keys(outcome.errors).length > 0 ? data(outcome, { status: 400 }) : outcome
  }
  return bad({ intent, errors: { form: "unknown action" } })
}

const fieldMessage = (errors: Record<string, string | undefined>, field: string) =>
  errors[field]?.startsWith(`${field} `) ? errors[field]!.slice(field.length + 1) : errors[field]?.replace(`${field}: `, "")

export default function Profile({ loaderData, actionData }: Route.ComponentProps) {
  const outcome = actionData as Outcome | undefined
  const errorsOf = (intent: string): Record<string, string | undefined> => (outcome?.intent === intent ? outcome.errors : {})
  const nameErrors = errorsOf("name")
  const passwordErrors = errorsOf("password")
  return (
    <div className="settings-page profile">
      <section className="panel">
        <h1>Profile</h1>
        <p className="muted">Signed in as {loaderData.email}.</p>
        {outcome?.notice ? <p className="notice" role="status">{outcome.notice}</p> : null}
        <FormError message={outcome?.errors["form"]} />
        <Form method="post" noValidate className="inline-form">
          <CsrfField />
          <input type="hidden" name="intent" value="name" />
          <Field name="name" label="Your name" autoComplete="name" defaultValue={outcome?.intent === "name" ? outcome.values?.["name"] : loaderData.name} error={fieldMessage(nameErrors, "name")} />
          <div className="field"><button type="submit" className="button">Save name</button></div>
        </Form>
      </section>
      <section className="panel">
        <h2>Password</h2>
        <Form method="post" noValidate>
          <CsrfField />
          <input type="hidden" name="intent" value="password" />
          <Field name="current_password" label="Current password" type="password" autoComplete="current-password" error={fieldMessage(passwordErrors, "current_password")} />
          <Field name="new_password" label="New password" type="password" autoComplete="new-password" error={fieldMessage(passwordErrors, "new_password")} hint="10 to 200 characters. Your other sessions are signed out." />
          <button type="submit" className="button">Change password</button>
        </Form>
      </section>
      <section className="panel">
        <h2>Sign-in with Google or Microsoft</h2>
        {loaderData.identities.length === 0
          ? <p className="muted">No identity provider is linked. Signing in with Google or Microsoft under {loaderData.email} links it.</p>
          : (
            <ul className="choice-list">
              {loaderData.identities.map((i) => <li key={`${i.provider}${i.linked_at}`}><span>{i.provider}</span><span className="muted">linked {i.linked_at.slice(0, 10)}</span></li>)}
            </ul>
          )}
      </section>
      <PushDevices {...loaderData.push} />
      <section className="panel">
        <h2>Other sessions</h2>
        <p className="muted">Signed in on another computer or browser you no longer use? End every session but this one.</p>
        <Form method="post">
          <CsrfField />
          <input type="hidden" name="intent" value="sessions" />
          <button type="submit" className="button secondary">Sign out of other sessions</button>
        </Form>
      </section>
    </div>
  )
}
