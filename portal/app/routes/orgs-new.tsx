import { OrganizationCreate } from "#services/domain/api/Account.ts"
import { Sessions } from "#services/identity/Sessions.ts"
import { Users } from "#services/identity/Users.ts"
import { Effect } from "effect"
import { data, Form, redirect } from "react-router"
import type { Route } from "./+types/orgs-new.ts"
import { CsrfField, Field, FormError } from "../components/Forms.tsx"
import { runEffect } from "../lib/effect.server.ts"
import { decodeForm, fieldError, formFields } from "../lib/forms.server.ts"
import { clientIp } from "../lib/member.server.ts"
import { requireCsrf, requireUser } from "../lib/session.server.ts"

export const meta: Route.MetaFunction = () => [{ title: "Create an organization · statusgrid" }]

export async function loader({ request, context }: Route.LoaderArgs) {
  const viewer = await requireUser(context, request)
  return { first: viewer.organizations.length === 0 }
}

/** The same rules as the CLI's `org create` (identity/Users.ts createOrganization): the creator becomes its admin. */
export async function action({ request, context }: Route.ActionArgs) {
  const form = await request.formData()
  const viewer = await requireCsrf(context, request, form)
  const fields = formFields(form, ["name", "slug"])
  const decoded = decodeForm(OrganizationCreate, fields)
  if (!decoded.ok) return data({ values: fields, errors: decoded.errors }, { status: 400 })
  const ip = clientIp(request)
  const result = await runEffect(context, request, Effect.gen(function*() {
    const created = yield* Users.use((u) => u.createOrganization(viewer.user.id, decoded.value, ip))
    yield* Sessions.use((s) => s.selectOrganization(viewer.session, created.id))
    return { slug: created.slug, errors: undefined }
  }).pipe(Effect.catchTags({
    Conflict: (e) => Effect.succeed({ slug: undefined, errors: fieldError(e, "slug") }),
    InvalidParameter: (e) => Effect.succeed({ slug: undefined, errors: fieldError(e) })
  })))
  if (result.slug === undefined) return data({ values: fields, errors: result.errors }, { status: 400 })
  throw redirect(`/dashboard/${result.slug}`)
}

export default function NewOrganization({ loaderData, actionData }: Route.ComponentProps) {
  const errors: Record<string, string | undefined> = actionData?.errors ?? {}
  return (
    <section className="panel narrow">
      <h1>{loaderData.first ? "Create your organization" : "Create an organization"}</h1>
      <p className="muted">Your team's stacks, monitors and alerts live in an organization. You can invite people later.</p>
      <Form method="post" noValidate>
        <CsrfField />
        <FormError message={errors["form"]} />
        <Field name="name" label="Organization name" autoComplete="organization" defaultValue={actionData?.values["name"]} error={errors["name"]} />
        <Field
          name="slug"
          label="Short name"
          defaultValue={actionData?.values["slug"]}
          error={errors["slug"]}
          hint="Lower-case letters, digits and hyphens; used in its addresses, as in /dashboard/acme."
        />
        <button type="submit" className="button wide">Create organization</button>
      </Form>
    </section>
  )
}
