import { Oidc } from "#services/identity/Oidc.ts"
import { Sessions } from "#services/identity/Sessions.ts"
import { Users } from "#services/identity/Users.ts"
import { Effect } from "effect"
import { data, Link, redirect } from "react-router"
import type { Route } from "./+types/oidc-callback.ts"
import { runEffect } from "../../lib/effect.server.ts"
import { afterSignIn, sessionCookieHeader } from "../../lib/session.server.ts"
import { callbackUrl, clearPendingCookie, failureMessage, pendingFrom, providerName } from "./oidc.server.ts"

export const meta: Route.MetaFunction = () => [{ title: "Sign-in failed · statusgrid" }]

/**
 * `GET /signin/<provider>/callback?code&state[&iss]`: the state must be the one
 * of this browser's pending sign-in (its cookie); then the whole response is
 * checked (its `iss`, RFC 9207), the code exchanged and the ID token checked
 * (Oidc.signInWithOidc), and the session is created as for a password
 * sign-in, then on to `next`, the only organization, or a choice. Any failure
 * shows why, with a way back, never a raw error.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const url = new URL(request.url)
  const pending = pendingFrom(request)
  const headers = new Headers({ "Set-Cookie": clearPendingCookie(request) })
  const provider = providerName(params.provider)
  const fail = (message: string) => data({ message, provider }, { status: 401, headers })
  const refused = url.searchParams.get("error")
  if (refused !== null) return fail(`The sign-in was not completed at the provider (${refused.slice(0, 100)}).`)
  const code = url.searchParams.get("code")
  if (pending === undefined || pending.provider !== params.provider || code === null || url.searchParams.get("state") !== pending.state) {
    return fail("This sign-in was started in another tab or too long ago.")
  }
  const result = await runEffect(context, request, Effect.gen(function*() {
    const { user } = yield* Oidc.use((o) =>
      o.signInWithOidc(params.provider, {
        parameters: url.searchParams,
        state: pending.state,
        verifier: pending.verifier,
        nonce: pending.nonce,
        redirectUri: callbackUrl(request, params.provider)
      })
    )
    const organizations = yield* Users.use((u) => u.organizationsOf(user.id))
    const { token } = yield* Sessions.use((s) => s.create(user.id, organizations.length === 1 ? organizations[0]!.id : null))
    return { token, organizations, message: undefined }
  }).pipe(
    Effect.tapError((e) => Effect.logWarning("OpenID Connect sign-in failed").pipe(Effect.annotateLogs({ provider: params.provider, error: e.message }))),
    Effect.catchTags({
      OidcSignInFailed: (e) => Effect.succeed({ token: undefined, organizations: [], message: failureMessage(e.reason, provider) }),
      Unprocessable: (e) => Effect.succeed({ token: undefined, organizations: [], message: e.message })
    })
  ))
  if (result.token === undefined) return fail(result.message)
  headers.append("Set-Cookie", sessionCookieHeader(request, result.token))
  throw redirect(afterSignIn(result.organizations, pending.next), { headers })
}

export default function OidcFailed({ loaderData }: Route.ComponentProps) {
  return (
    <section className="panel narrow message-page">
      <p className="eyebrow">Sign-in with {loaderData.provider}</p>
      <h1>Sign-in failed</h1>
      <p>{loaderData.message} Nothing was changed.</p>
      <p className="actions">
        <Link to="/signin" className="button">Back to sign-in</Link>
      </p>
    </section>
  )
}
