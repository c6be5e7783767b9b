import { Oidc } from "#services/identity/Oidc.ts"
import { Effect } from "effect"
import { redirect } from "react-router"
import type { Route } from "./+types/oidc-start.ts"
import { runEffect } from "../../lib/effect.server.ts"
import { safeNext } from "../../lib/session.server.ts"
import { callbackUrl, pendingCookie } from "./oidc.server.ts"

/**
 * `GET /signin/<provider>`: starts the authorization-code flow (PKCE S256,
 * state, nonce: services/identity/Oidc.ts) and sends the browser to the
 * provider. An unknown provider is the 404 page; an unreachable one the
 * sign-in page again with its error.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const next = safeNext(new URL(request.url).searchParams.get("next"))
  const started = await runEffect(context, request, Oidc.use((o) => o.authorizationUrl(params.provider, callbackUrl(request, params.provider))).pipe(
    Effect.catchTag("OidcSignInFailed", (e) => Effect.succeed({ failed: e.message }))
  ))
  if ("failed" in started) {
    throw redirect(`/signin?oidc_error=${encodeURIComponent("The identity provider could not be reached. Try again, or sign in with your password.")}${next ? `&next=${encodeURIComponent(next)}` : ""}`)
  }
  throw redirect(started.url, {
    headers: { "Set-Cookie": pendingCookie(request, { provider: params.provider, state: started.state, verifier: started.verifier, nonce: started.nonce, next }) }
  })
}
