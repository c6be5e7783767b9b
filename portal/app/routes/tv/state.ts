import type { Route } from "./+types/state.ts"
import { loadTv, noindex } from "../../components/tv/screen.server.ts"

/** The TV screen's state as JSON, read again by the open page on each change (components/tv/useLiveScreen.ts). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const load = await loadTv(context, request, params.ref)
  if (load.kind !== "screen") return Response.json({ message: load.message }, { status: 402, headers: noindex })
  return Response.json(load.screen, { headers: { ...noindex, "cache-control": "no-store" } })
}
