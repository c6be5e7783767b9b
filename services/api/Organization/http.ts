import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { ApiKeys } from "../../orgs/ApiKeys.ts"
import { Organizations } from "../../orgs/Organizations.ts"

/** Handlers of the `organization` group: the caller's organization and its settings, API keys and audit log. */
export const OrganizationHttpNoDeps = HttpApiBuilder.group(
  Api,
  "organization",
  Effect.fn(function*(handlers) {
    const organizations = yield* Organizations
    const keys = yield* ApiKeys
    return handlers.handleAll({
      get: () => CurrentPrincipal.use((p) => organizations.get(p)),
      updateSettings: ({ payload }) => CurrentPrincipal.use((p) => organizations.updateSettings(p, payload)),
      listApiKeys: ({ query }) => CurrentPrincipal.use((p) => keys.list(p, query)),
      createApiKey: ({ payload }) => CurrentPrincipal.use((p) => keys.create(p, payload)),
      revokeApiKey: ({ params }) => CurrentPrincipal.use((p) => keys.revoke(p, params.id)),
      auditLog: ({ query: { actor, entity_type, since, until, ...page } }) =>
        CurrentPrincipal.use((p) => organizations.auditLog(p, page, { actor, entity_type, since, until }))
    })
  })
)

export const OrganizationHttp = OrganizationHttpNoDeps.pipe(Layer.provide(Organizations.layer))
