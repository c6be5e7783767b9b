import type { Route } from "./+types/state.ts"
import { loadShare, noindex } from "../../components/tv/screen.server.ts"

/** The share page's state as JSON, read again by the open page on each change (components/tv/useLiveScreen.ts). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { screen } = await loadShare(context, request, params.token)
  return Response.json(screen, { headers: { ...noindex, "cache-control": "no-store" } })
}
