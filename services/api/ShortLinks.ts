import { Effect, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { rowsOf } from "../platform/Rows.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const alertIdRows = rowsOf("alerts", Schema.Struct({ id: Schema.String }))

const codePattern = /^[A-Za-z0-9_-]{8,16}$/

/**
 * `GET /a/{code}`: the short link of an alert (SMS messages carry it, to fit
 * 160 characters), a 302 to the alert's page in the portal (`/alerts/<id>`).
 * The code is 48 random bits; the page itself asks for a sign-in (and returns
 * to the alert after it), so the link reveals only that an alert exists.
 */
export const ShortLinkRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const sql = yield* SqlClient
  yield* router.add("GET", "/a/:code", Effect.gen(function*() {
    const params = yield* HttpRouter.params
    const code = params["code"] ?? ""
    const [row] = codePattern.test(code)
      ? yield* sql`SELECT id FROM alerts WHERE short_code = ${code}`.pipe(Effect.flatMap(alertIdRows), Effect.orDie)
      : []
    if (row === undefined) {
      return yield* HttpServerResponse.json({ code: "not_found", message: "no alert has this link", field: "code" }, { status: 404 })
    }
    return HttpServerResponse.redirect(`/alerts/${row.id}`, { status: 302 })
  }))
}))
