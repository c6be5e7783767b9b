import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { checkCsrf, CsrfMismatch, type Session, SessionExpired } from "./Sessions.ts"

const session = (csrf: string): Session => ({
  id: "0".repeat(64),
  user_id: "00000000-0000-4000-8000-000000000001",
  organization_id: null,
  csrf_token: csrf,
  created_at: new Date(),
  expires_at: new Date(Date.now() + 3_600_000),
  last_seen_at: new Date()
})

/** A portal-like API whose endpoints fail with the session errors, to see what reaches the browser. */
class Portal extends HttpApi.make("portal").add(
  HttpApiGroup.make("session")
    .add(HttpApiEndpoint.get("expired", "/expired", { success: Schema.String, error: [SessionExpired, CsrfMismatch] }))
    .add(HttpApiEndpoint.post("form", "/form", { success: Schema.String, error: [SessionExpired, CsrfMismatch] }))
) {}

const PortalLive = HttpApiBuilder.group(Portal, "session", (handlers) =>
  Effect.succeed(
    handlers
      .handle("expired", () => Effect.fail(new SessionExpired({ message: "your session has expired; sign in again" })))
      .handle("form", () => checkCsrf(session("expected-token"), "forged-token").pipe(Effect.as("saved")))
  ))

describe("Sessions", () => {
  it.effect("checkCsrf: the session's token passes; another, an empty or a missing one is CsrfMismatch", () =>
    Effect.gen(function*() {
      const s = session("b3Jk4ZtG3k9x3nQ8lQ2eZ6n1mS0pJ2dYwq1hXcVvT0A")
      yield* checkCsrf(s, "b3Jk4ZtG3k9x3nQ8lQ2eZ6n1mS0pJ2dYwq1hXcVvT0A")
      for (const presented of ["b3Jk4ZtG3k9x3nQ8lQ2eZ6n1mS0pJ2dYwq1hXcVvT0B", "b3Jk", "", null, undefined]) {
        const error = yield* Effect.flip(checkCsrf(s, presented))
        assert.instanceOf(error, CsrfMismatch, String(presented))
        assert.strictEqual(error.code, "csrf_mismatch")
      }
    }))

  it("both session errors answer HTTP 419 with the API's error body", async () => {
    const { handler, dispose } = HttpRouter.toWebHandler(
      HttpApiBuilder.layer(Portal).pipe(Layer.provide(PortalLive), Layer.provide(HttpServer.layerServices)),
      { disableLogger: true }
    )
    try {
      const expired = await handler(new Request("http://portal.test/expired"))
      assert.strictEqual(expired.status, 419)
      assert.deepStrictEqual(await expired.json(), { code: "session_expired", message: "your session has expired; sign in again" })
      const form = await handler(new Request("http://portal.test/form", { method: "POST" }))
      assert.strictEqual(form.status, 419)
      assert.deepStrictEqual(await form.json(), {
        code: "csrf_mismatch",
        message: "the form is out of date (CSRF token mismatch); reload the page"
      })
    } finally {
      await dispose()
    }
  })
})
