import { MaintenanceWindows } from "#services/orgs/MaintenanceWindows.ts"
import { Stacks } from "#services/orgs/Stacks.ts"
import { Effect } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/window.ts"
import { CsrfField, FormError } from "../../../components/Forms.tsx"
import { WindowFields, windowValues } from "../../../components/settings/maintenance/WindowForm.tsx"
import stylesheet from "../../../components/settings/maintenance/maintenance.css?url"
import stacksStylesheet from "../../../components/settings/stacks.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import { type FieldErrors, fieldError } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { isUuid } from "../stacks/stacks.server.ts"
import { decodeWindowForm } from "./window.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stacksStylesheet }, { rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.window.title ?? "Maintenance window"} · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }
]

const notFound = () => data({ message: "no such maintenance window" }, { status: 404, statusText: "Not Found" })

/** One window (the API's `GET /maintenance-windows/{id}`), editable by Members, deletable by Admins. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  if (!isUuid(params.id)) throw notFound()
  const { window, stacks } = await runEffect(context, request, Effect.all({
    window: MaintenanceWindows.use((w) => w.get(principal, params.id)).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined))),
    stacks: Stacks.use((s) => s.list(principal, { limit: 100 }))
  }, { concurrency: 2 }))
  if (window === undefined) throw notFound()
  return {
    organization: { slug: organization.slug, name: organization.name },
    allowed: { write: allowed["content.write"], remove: allowed["content.delete"] },
    window,
    stacks: stacks.data.map((s) => ({ id: s.id, name: s.name })),
    saved: new URL(request.url).searchParams.has("saved")
  }
}

interface ActionResult {
  readonly errors: FieldErrors
  readonly values?: ReturnType<typeof decodeWindowForm>["values"]
}

/** Save (every field, as the API's PATCH with all of them) or delete. */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  if (!isUuid(params.id)) throw notFound()
  const calendar = `/settings/${organization.slug}/maintenance`
  if (form.get("intent") === "delete") {
    await runEffect(context, request, MaintenanceWindows.use((w) => w.remove(principal, params.id)).pipe(
      Effect.catchTag("NotFound", () => Effect.void)
    ))
    return redirect(`${calendar}?view=list`)
  }
  const decoded = decodeWindowForm(form)
  if (!decoded.ok) return data<ActionResult>({ errors: decoded.errors, values: decoded.values }, { status: 400 })
  const { description, ...rest } = decoded.value
  const outcome = await runEffect(context, request, MaintenanceWindows.use((w) =>
    w.update(principal, params.id, { ...rest, description: description ?? "", stack_id: decoded.value.stack_id ?? null })
  ).pipe(
    Effect.map(() => ({ ok: true as const })),
    Effect.catchTags({
      NotFound: (e) => Effect.succeed({ ok: false as const, errors: fieldError(e, "stack_id") }),
      InvalidParameter: (e) => Effect.succeed({ ok: false as const, errors: fieldError(e) })
    })
  ))
  if (!outcome.ok) return data<ActionResult>({ errors: outcome.errors, values: decoded.values }, { status: 400 })
  return redirect(`${calendar}/${params.id}?saved`)
}

const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`

export default function MaintenanceWindowPage({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, allowed, window, stacks, saved } = loaderData
  const result = actionData as ActionResult | undefined
  const covers = window.stack_id === null ? "The whole organization" : `Stack: ${stacks.find((s) => s.id === window.stack_id)?.name ?? "a removed stack"}`
  return (
    <>
      <section className="panel" aria-labelledby="window-title">
        <p className="muted"><Link to={`/settings/${organization.slug}/maintenance`}>Maintenance calendar</Link> ›</p>
        <h1 id="window-title">{window.title}</h1>
        {saved && result === undefined ? <p className="form-success" role="status">Saved. Calendar subscribers get the change on their next refresh.</p> : null}
        <dl className="window-facts">
          <dt>Covers</dt><dd>{covers}</dd>
          <dt>Starts</dt><dd><time dateTime={window.starts_at}>{utc(window.starts_at)}</time></dd>
          <dt>Ends</dt><dd><time dateTime={window.ends_at}>{utc(window.ends_at)}</time></dd>
          <dt>Now</dt><dd>{window.active ? "open: alerts about what it covers are held" : "not open"}</dd>
          {window.description === "" ? null : <><dt>Description</dt><dd>{window.description}</dd></>}
        </dl>
      </section>
      {allowed.write
        ? (
          <section className="panel" aria-labelledby="window-edit-title">
            <h2 id="window-edit-title">Edit</h2>
            <Form method="post" className="stack-form window-form">
              <CsrfField />
              <FormError message={result?.errors["form"]} />
              <WindowFields values={result?.values ?? windowValues(window)} errors={result?.errors ?? {}} stacks={stacks} guessZone={false} />
              <button type="submit" className="button">Save</button>
            </Form>
          </section>
        )
        : <p className="muted read-only">Your role can view this window but not change it.</p>}
      {allowed.remove
        ? (
          <section className="panel" aria-labelledby="window-delete-title">
            <h2 id="window-delete-title">Delete</h2>
            <Form method="post">
              <CsrfField />
              <button type="submit" name="intent" value="delete" className="button danger">Delete {window.title}</button>
            </Form>
          </section>
        )
        : null}
    </>
  )
}
