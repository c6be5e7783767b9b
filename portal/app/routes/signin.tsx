import { SignIn } from "#services/domain/api/Account.ts"
import { Oidc } from "#services/identity/Oidc.ts"
import { Sessions } from "#services/identity/Sessions.ts"
import { SignInThrottle } from "#services/identity/SignInThrottle.ts"
import { Users } from "#services/identity/Users.ts"
import { Effect } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/signin.ts"
import { ProviderButtons } from "../components/access/ProviderButtons.tsx"
import accessCss from "../components/alerts/alerts.css?url"
import { Field, FormError } from "../components/Forms.tsx"
import { runEffect } from "../lib/effect.server.ts"
import { decodeForm, formFields } from "../lib/forms.server.ts"
import { afterSignIn, optionalUser, safeNext, sessionCookieHeader } from "../lib/session.server.ts"

export const meta: Route.MetaFunction = () => [{ title: "Sign in · statusgrid" }]

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: accessCss }]

export async function loader({ request, context }: Route.LoaderArgs) {
  const next = safeNext(new URL(request.url).searchParams.get("next"))
  const viewer = await optionalUser(context, request)
  if (viewer) throw redirect(afterSignIn(viewer.organizations, next))
  // Google and Microsoft (OIDC_PROVIDERS), and why the last attempt with one failed before leaving (routes/access/oidc-start.tsx).
  const providers = await runEffect(context, request, Oidc.use((o) => Effect.succeed(o.providers)))
  const oidcError = new URL(request.url).searchParams.get("oidc_error")?.slice(0, 300) ?? null
  return { next: next ?? null, providers, oidcError }
}

/** A refused sign-in says when to retry (the action's Retry-After). */
export const headers: Route.HeadersFunction = ({ actionHeaders }) => {
  const retryAfter = actionHeaders.get("Retry-After")
  return retryAfter === null ? new Headers() : new Headers({ "Retry-After": retryAfter })
}

/** E-mail and password; then `next` (the page the person came from), their only organization, or a choice. */
export async function action({ request, context }: Route.ActionArgs) {
  const form = await request.formData()
  const fields = formFields(form, ["email", "password", "next"])
  const values = { email: fields["email"]! }
  const decoded = decodeForm(SignIn, fields)
  if (!decoded.ok) return data({ values, errors: decoded.errors }, { status: 400 })
  const { email, password } = decoded.value
  const result = await runEffect(context, request, Effect.gen(function*() {
    yield* SignInThrottle.use((t) => t.attempt(email))
    const users = yield* Users
    const user = yield* users.signIn(email, password)
    const organizations = yield* users.organizationsOf(user.id)
    const { token } = yield* Sessions.use((s) => s.create(user.id, organizations.length === 1 ? organizations[0]!.id : null))
    return { token, organizations }
  }).pipe(
    Effect.catchTag("Unauthorized", (e) => Effect.succeed({ token: undefined, message: e.message, status: 401 })),
    Effect.catchTag("RateLimited", (e) => Effect.succeed({ token: undefined, message: e.message, status: 429, retryAfterS: e.retry_after_s }))
  ))
  if (result.token === undefined) {
    const headers = "retryAfterS" in result ? { "Retry-After": String(result.retryAfterS) } : undefined
    return data({ values, errors: { form: result.message } }, { status: result.status, ...(headers === undefined ? {} : { headers }) })
  }
  throw redirect(afterSignIn(result.organizations, safeNext(fields["next"])), {
    headers: { "Set-Cookie": sessionCookieHeader(request, result.token) }
  })
}

export default function SignInPage({ loaderData, actionData }: Route.ComponentProps) {
  const errors: Record<string, string | undefined> = actionData?.errors ?? {}
  const next = loaderData.next
  return (
    <section className="panel narrow">
      <h1>Sign in</h1>
      <FormError message={loaderData.oidcError ?? undefined} />
      <ProviderButtons providers={loaderData.providers} next={next} />
      <Form method="post" noValidate>
        <FormError message={errors["form"]} />
        {next ? <input type="hidden" name="next" value={next} /> : null}
        <Field name="email" label="E-mail" type="email" autoComplete="username" defaultValue={actionData?.values.email} error={errors["email"]} />
        <Field name="password" label="Password" type="password" autoComplete="current-password" error={errors["password"]} />
        <button type="submit" className="button wide">Sign in</button>
      </Form>
      <p className="muted">New here? <Link to={next ? `/signup?next=${encodeURIComponent(next)}` : "/signup"}>Create an account</Link></p>
    </section>
  )
}
