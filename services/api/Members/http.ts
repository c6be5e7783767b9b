import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../domain/api/Api.ts"
import { CurrentPrincipal } from "../../domain/Principal.ts"
import { Members } from "../../orgs/Members.ts"
import { SecretBox } from "../../platform/SecretBox.ts"

/** Handlers of the `members` group: members, their roles, and invitations. */
export const MembersHttpNoDeps = HttpApiBuilder.group(
  Api,
  "members",
  Effect.fn(function*(handlers) {
    const members = yield* Members
    return handlers.handleAll({
      list: ({ query }) => CurrentPrincipal.use((p) => members.list(p, query)),
      update: ({ params, payload }) => CurrentPrincipal.use((p) => members.update(p, params.user_id, payload)),
      remove: ({ params }) => CurrentPrincipal.use((p) => members.remove(p, params.user_id)),
      listInvitations: ({ query }) => CurrentPrincipal.use((p) => members.listInvitations(p, query)),
      invite: ({ payload }) => CurrentPrincipal.use((p) => members.invite(p, payload)),
      revokeInvitation: ({ params }) => CurrentPrincipal.use((p) => members.revokeInvitation(p, params.id))
    })
  })
)

export const MembersHttp = MembersHttpNoDeps.pipe(Layer.provide(Members.layer.pipe(Layer.provide(SecretBox.layer))))
