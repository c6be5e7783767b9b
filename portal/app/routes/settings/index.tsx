import { redirect } from "react-router"
import type { Route } from "./+types/index.ts"
import { settingsSections } from "../../components/settings/sections.ts"
import { requireMember } from "../../lib/member.server.ts"

/** `/settings/<org>` opens the first section the role may see. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, allowed } = await requireMember(context, request, params.org)
  const first = settingsSections.find((s) => allowed[s.needs])
  throw redirect(`/settings/${organization.slug}/${first?.path ?? "plan"}`)
}
