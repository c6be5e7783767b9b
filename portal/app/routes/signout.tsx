import { Sessions } from "#services/identity/Sessions.ts"
import { redirect } from "react-router"
import type { Route } from "./+types/signout.ts"
import { runEffect } from "../lib/effect.server.ts"
import { clearedCookieHeader, requireCsrf } from "../lib/session.server.ts"

/** Sign-out is a POST with the CSRF token (a GET here only goes home). */
export function loader() {
  return redirect("/")
}

export async function action({ request, context }: Route.ActionArgs) {
  const viewer = await requireCsrf(context, request, await request.formData())
  await runEffect(context, request, Sessions.use((s) => s.destroy(viewer.token)))
  throw redirect("/", { headers: { "Set-Cookie": clearedCookieHeader(request) } })
}
