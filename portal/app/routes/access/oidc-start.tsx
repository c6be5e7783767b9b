import { Oidc } from "#services/identity/Oidc.ts"
import { Effect } from "effect"
import { redirect } from "react-router"
import type { Route } from "./+types/oidc-start.ts"
import { runEffect } from "../../lib/effect.server.ts"
import { safeNext } from "../../lib/session.server.ts"
import { callbackUrl, failureMessage, pendingCookie, providerName } from "./oidc.server.ts"

/**
 * `GET /signin/<provider>`: starts the authorization-code flow (PKCE S256,
 * state, nonce: services/identity/Oidc.ts) and sends the browser to the
 * provider. An unknown provider is the 404 page; an unreachable one (or a
 * discovery document that does not hold up) the sign-in page again with
 * what happened, the details in the log.
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const next = safeNext(new URL(request.url).searchParams.get("next"))
  const started = await runEffect(context, request, Oidc.use((o) => o.authorizationUrl(params.provider, callbackUrl(request, params.provider))).pipe(
    Effect.catchTag("OidcSignInFailed", (e) =>
      Effect.logWarning("OpenID Connect sign-in could not start").pipe(
        Effect.annotateLogs({ provider: params.provider, error: e.message }),
        Effect.as({ failed: e.reason })
      ))
  ))
  if ("failed" in started) {
    const message = failureMessage(started.failed, providerName(params.provider))
    throw redirect(`/signin?oidc_error=${encodeURIComponent(message)}${next ? `&next=${encodeURIComponent(next)}` : ""}`)
  }
  throw redirect(started.url, {
    headers: { "Set-Cookie": pendingCookie(request, { provider: params.provider, state: started.state, verifier: started.verifier, nonce: started.nonce, next }) }
  })
}
