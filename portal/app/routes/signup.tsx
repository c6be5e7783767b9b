import { SignUp } from "#services/domain/api/Account.ts"
import { Oidc } from "#services/identity/Oidc.ts"
import { Sessions } from "#services/identity/Sessions.ts"
import { Users } from "#services/identity/Users.ts"
import { Effect } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/signup.ts"
import { ProviderButtons } from "../components/access/ProviderButtons.tsx"
import accessCss from "../components/alerts/alerts.css?url"
import { Field, FormError } from "../components/Forms.tsx"
import { runEffect } from "../lib/effect.server.ts"
import { decodeForm, fieldError, formFields } from "../lib/forms.server.ts"
import { optionalUser, safeNext, sessionCookieHeader } from "../lib/session.server.ts"

export const meta: Route.MetaFunction = () => [{ title: "Create an account · statusgrid" }]

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: accessCss }]

export async function loader({ request, context }: Route.LoaderArgs) {
  if (await optionalUser(context, request)) throw redirect("/orgs")
  const providers = await runEffect(context, request, Oidc.use((o) => Effect.succeed(o.providers)))
  return { next: safeNext(new URL(request.url).searchParams.get("next")) ?? null, providers }
}

/** Decodes with the API's SignUp Schema, creates the user and a session, then on to creating an organization. */
export async function action({ request, context }: Route.ActionArgs) {
  const form = await request.formData()
  const fields = formFields(form, ["name", "email", "password"])
  const values = { name: fields["name"]!, email: fields["email"]! }
  const decoded = decodeForm(SignUp, fields)
  if (!decoded.ok) return data({ values, errors: decoded.errors }, { status: 400 })
  const { name, email, password } = decoded.value
  const result = await runEffect(context, request, Effect.gen(function*() {
    const user = yield* Users.use((u) => u.signUp(email, password, name))
    const { token } = yield* Sessions.use((s) => s.create(user.id))
    return { token, errors: undefined }
  }).pipe(Effect.catchTags({
    Conflict: (e) => Effect.succeed({ token: undefined, errors: fieldError(e, "email") }),
    InvalidParameter: (e) => Effect.succeed({ token: undefined, errors: fieldError(e) })
  })))
  if (result.token === undefined) return data({ values, errors: result.errors }, { status: 400 })
  const next = safeNext(new URL(request.url).searchParams.get("next"))
  throw redirect(next ?? "/orgs/new", { headers: { "Set-Cookie": sessionCookieHeader(request, result.token) } })
}

export default function SignUpPage({ loaderData, actionData }: Route.ComponentProps) {
  const errors: Record<string, string | undefined> = actionData?.errors ?? {}
  const next = loaderData.next
  return (
    <section className="panel narrow">
      <h1>Create your account</h1>
      <p className="muted">The Free plan watches one stack of up to 10 components. No card needed.</p>
      <ProviderButtons providers={loaderData.providers} next={next} />
      <Form method="post" noValidate>
        <FormError message={errors["form"]} />
        <Field name="name" label="Your name" autoComplete="name" defaultValue={actionData?.values.name} error={errors["name"]} />
        <Field name="email" label="E-mail" type="email" autoComplete="email" defaultValue={actionData?.values.email} error={errors["email"]} />
        <Field name="password" label="Password" type="password" autoComplete="new-password" error={errors["password"]} hint="At least 10 characters." />
        <button type="submit" className="button wide">Create account</button>
      </Form>
      <p className="muted">Already have an account? <Link to={next ? `/signin?next=${encodeURIComponent(next)}` : "/signin"}>Sign in</Link></p>
    </section>
  )
}
