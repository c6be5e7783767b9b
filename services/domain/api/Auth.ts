import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { CurrentPrincipal } from "../Principal.ts"
import { RateLimited, Unauthorized } from "./Errors.ts"

/**
 * Organization endpoints authenticate with an organization API key,
 * `Authorization: Bearer sg_...`; the key's role is the caller's role. The
 * middleware also applies the per-key rate limit. Server side:
 * services/api/OrgAuth.ts.
 */
export class OrgAuth extends HttpApiMiddleware.Service<OrgAuth, { provides: CurrentPrincipal }>()("statusgrid/domain/api/OrgAuth", {
  security: { bearer: HttpApiSecurity.bearer },
  error: [Unauthorized, RateLimited]
}) {}
