import { peerHeader } from "#services/api/Crowd/http.ts"
import { CrowdReports } from "#services/crowd/CrowdReports.ts"
import { sessionTokenFrom } from "#services/identity/SessionCookie.ts"
import { Effect, Result } from "effect"
import { data } from "react-router"
import { type ReportResult, shownCrowdOf } from "../components/catalog/CrowdReport.tsx"
import { type PortalContext, runEffect } from "./effect.server.ts"
import { requireCsrf } from "./session.server.ts"

/**
 * A crowd report from a page (source, stack or share page), by the same service as
 * `POST /api/v1/sources/{key}/reports`: signed in (the session's CSRF token checked), the person
 * is the reporter, else the address the server saw (`peerHeader`, set by services/api/Portal.ts).
 * React Router refuses another site's POST. Errors are the API's, with its status.
 */
export const reportProblem = async (context: PortalContext, request: Request, form: FormData, sourceKey: string) => {
  const signedIn = sessionTokenFrom(request.headers.get("cookie")) === undefined ? null : await requireCsrf(context, request, form)
  const text = (name: string) => {
    const value = form.get(name)
    return typeof value === "string" && value !== "" ? value : undefined
  }
  const outcome = await runEffect(context, request, CrowdReports.use((c) =>
    c.report({
      sourceKey,
      symptom: text("symptom") ?? "",
      componentId: text("component_id"),
      address: request.headers.get(peerHeader) ?? "unknown",
      userId: signedIn?.user.id
    })
  ).pipe(Effect.result))
  if (Result.isSuccess(outcome)) {
    return { report: true, ok: true, counted: outcome.success.counted, crowd: shownCrowdOf(outcome.success.score) } satisfies ReportResult
  }
  const error = outcome.failure
  const status = error._tag === "RateLimited" ? 429 : error._tag === "NotFound" ? 404 : 400
  return data<ReportResult>({ report: true, ok: false, error: error.message }, { status })
}

/** The sources of `keys` users can report (the public catalog's), with their names; none when they cannot be read (logged). */
export const reportableSources = (context: PortalContext, request: Request, keys: ReadonlyArray<string>) =>
  runEffect(context, request, CrowdReports.use((c) => c.reportable(keys)).pipe(
    Effect.catchCause((cause) => Effect.as(Effect.logWarning("page: reportable sources unavailable", cause), []))
  ))
