import { OrganizationSettingsUpdate } from "#services/domain/api/Organization.ts"
import { TvLinkCreate, tvLinkLimits } from "#services/domain/api/TvLinks.ts"
import { isFrameAncestor, maxFrameAncestors } from "#services/domain/Organization.ts"
import type { Principal } from "#services/domain/Principal.ts"
import { Organizations } from "#services/orgs/Organizations.ts"
import { Stacks } from "#services/orgs/Stacks.ts"
import { TvLinks } from "#services/orgs/TvLinks.ts"
import { Effect } from "effect"
import { data, Form, Link } from "react-router"
import type { Route } from "./+types/tv.ts"
import { CsrfField, Field, FormError } from "../../components/Forms.tsx"
import { Control } from "../../components/settings/monitors/MonitorForm.tsx"
import stylesheet from "../../components/settings/stacks.css?url"
import { type PortalContext, runEffect } from "../../lib/effect.server.ts"
import { decodeForm, type FieldErrors, fieldError, formFields } from "../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../lib/member.server.ts"
import { isUuid } from "./stacks/stacks.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `TV links · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }]

/**
 * The organization's TV links (the API's `GET /tv-links`), its stacks to choose from, and the sites
 * allowed to frame its TV links and share pages (`frame_ancestors` of `GET /organization`).
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const { links, stacks, settings } = await runEffect(context, request, Effect.all({
    links: TvLinks.use((t) => t.list(principal)),
    stacks: Stacks.use((s) => s.list(principal, { limit: 100 })),
    settings: Organizations.use((o) => o.get(principal))
  }, { concurrency: 3 }))
  const names = new Map(stacks.data.map((s) => [s.id, s.name]))
  return {
    organization: { slug: organization.slug, name: organization.name },
    canWrite: allowed["content.write"],
    // Where these pages may be framed is the Admins' (PATCH /organization/settings).
    canFrame: allowed["members.manage"],
    frameAncestors: settings.frame_ancestors,
    origin: new URL(request.url).origin,
    stacks: stacks.data.map((s) => ({ id: s.id, name: s.name })),
    links: links.data.map((l) => ({
      id: l.id,
      name: l.name,
      url: l.url,
      rotation_s: l.rotation_s,
      stacks: l.stack_ids.map((id) => names.get(id) ?? "a removed stack"),
      created_at: l.created_at
    }))
  }
}

interface ActionResult {
  readonly intent: "create" | "revoke" | "framing" | "unknown"
  readonly errors: FieldErrors
  readonly values?: { readonly name: string; readonly rotation_s: string; readonly stack_ids: ReadonlyArray<string> }
  readonly created?: { readonly name: string; readonly url: string }
  /** `framing`: what was typed (kept on an error), and the list saved. */
  readonly framing?: { readonly text: string; readonly saved?: ReadonlyArray<string> }
}

/**
 * The sites allowed to frame the TV links and share pages, from the form's text area (one origin a
 * line; spaces and commas separate too), through the service of `PATCH /organization/settings`,
 * decoded by its Schema (`OrganizationSettingsUpdate`).
 */
const saveFraming = async (context: PortalContext, request: Request, form: FormData, principal: Principal) => {
  const text = formFields(form, ["frame_ancestors"])["frame_ancestors"]!
  const origins = text.split(/[\s,]+/).filter((o) => o !== "")
  const fail = (errors: FieldErrors, status = 400) => data<ActionResult>({ intent: "framing", errors, framing: { text } }, { status })
  const decoded = decodeForm(OrganizationSettingsUpdate, { frame_ancestors: origins } as unknown as Record<string, string>)
  if (!decoded.ok) {
    const bad = origins.find((o) => !isFrameAncestor(o))
    const message = decoded.errors["frame_ancestors"] ?? "is invalid"
    return fail({ frame_ancestors: bad === undefined ? message : `has “${bad}”, which ${message}` })
  }
  const outcome = await runEffect(
    context,
    request,
    Organizations.use((o) => o.updateSettings(principal, decoded.value)).pipe(
      Effect.map((org) => ({ ok: true as const, saved: org.frame_ancestors })),
      Effect.catchTag("Forbidden", (e) => Effect.succeed({ ok: false as const, errors: { form: e.message } as FieldErrors }))
    )
  )
  if (!outcome.ok) return fail(outcome.errors, 403)
  return { intent: "framing", errors: {}, framing: { text: outcome.saved.join("\n"), saved: outcome.saved } } satisfies ActionResult
}

/**
 * Creates or revokes a TV link through the service of the API's `POST /tv-links` and
 * `DELETE /tv-links/{id}` (its permission, Pro-plan check, audit entry), input decoded by `TvLinkCreate`;
 * or saves the sites allowed to frame the TV links and share pages (`saveFraming`).
 */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { principal } = await requireMemberAction(context, request, form, params.org)
  const intent = form.get("intent")
  if (intent === "framing") return saveFraming(context, request, form, principal)
  if (intent === "revoke") {
    const id = formFields(form, ["id"])["id"]!
    if (!isUuid(id)) return data<ActionResult>({ intent, errors: { id: "must be a UUID" } }, { status: 400 })
    await runEffect(context, request, TvLinks.use((t) => t.revoke(principal, id)))
    return { intent, errors: {} } satisfies ActionResult
  }
  if (intent !== "create") return data<ActionResult>({ intent: "unknown", errors: { form: "unknown action" } }, { status: 400 })
  const text = formFields(form, ["name", "rotation_s"])
  const stackIds = form.getAll("stack_id").filter((v): v is string => typeof v === "string")
  const values = { name: text["name"]!, rotation_s: text["rotation_s"]!, stack_ids: stackIds }
  const fail = (errors: FieldErrors, status = 400) => data<ActionResult>({ intent, errors, values }, { status })
  const rotation = values.rotation_s.trim()
  // The API's Schema on the same JSON shape: a number of seconds (an empty field: the default), ids as UUIDs.
  const input = { name: values.name, stack_ids: stackIds, ...(rotation === "" ? {} : { rotation_s: /^-?\d+(\.\d+)?$/.test(rotation) ? Number(rotation) : rotation }) }
  const decoded = decodeForm(TvLinkCreate, input as unknown as Record<string, string>)
  if (!decoded.ok) return fail(decoded.errors)
  const outcome = await runEffect(
    context,
    request,
    TvLinks.use((t) => t.create(principal, decoded.value)).pipe(
      Effect.map((link) => ({ ok: true as const, link })),
      Effect.catchTags({
        PlanLimitReached: (e) => Effect.succeed({ ok: false as const, status: 402, errors: { form: e.message } as FieldErrors }),
        NotFound: (e) => Effect.succeed({ ok: false as const, status: 404, errors: fieldError(e, "stack_ids") })
      })
    )
  )
  if (!outcome.ok) return fail(outcome.errors, outcome.status)
  return { intent, errors: {}, created: { name: outcome.link.name, url: outcome.link.url } } satisfies ActionResult
}

export default function TvSettings({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, links, stacks, canWrite, canFrame, frameAncestors, origin } = loaderData
  const result = actionData as ActionResult | undefined
  const errors = result?.intent === "create" ? result.errors : {}
  const values = result?.intent === "create" && result.created === undefined ? result.values : undefined
  const chosen = new Set(values?.stack_ids ?? [])
  return (
    <>
      <section className="panel" aria-labelledby="tv-title">
        <h1 id="tv-title">TV links</h1>
        <p className="muted">
          A TV link shows some stacks on a wall screen at its own address, without signing in, one after another. Members can also open{" "}
          <Link to={`/tv/${organization.slug}`}>all stacks in TV mode</Link>.
        </p>
        {result?.intent === "revoke" && Object.keys(result.errors).length === 0 ? <p className="form-success" role="status">TV link revoked: its address answers 404.</p> : null}
        {result?.intent === "revoke" ? <FormError message={result.errors["id"]} /> : null}
        {links.length === 0
          ? <p>No TV link yet.</p>
          : (
            <ul className="stack-rows">
              {links.map((l) => (
                <li key={l.id} className="stack-row">
                  <div>
                    <h2>{l.name}</h2>
                    <p className="share-url"><a href={`${origin}${l.url}`}>{`${origin}${l.url}`}</a></p>
                    <p className="muted">{l.stacks.join(", ")} · each for {l.rotation_s} s</p>
                  </div>
                  {canWrite
                    ? (
                      <Form method="post">
                        <CsrfField />
                        <input type="hidden" name="id" value={l.id} />
                        <button type="submit" name="intent" value="revoke" className="button small secondary" aria-label={`Revoke ${l.name}`}>Revoke</button>
                      </Form>
                    )
                    : null}
                </li>
              ))}
            </ul>
          )}
      </section>
      {canWrite
        ? (
          <section className="panel" aria-labelledby="tv-create-title">
            <h2 id="tv-create-title">New TV link</h2>
            {result?.created
              ? (
                <p className="form-success" role="status">
                  Created {result.created.name}: <a href={`${origin}${result.created.url}`}>{`${origin}${result.created.url}`}</a>
                </p>
              )
              : null}
            {stacks.length === 0
              ? <p>Create a <Link to={`/settings/${organization.slug}/stacks`}>stack</Link> first: a TV link shows stacks.</p>
              : (
                <Form method="post" className="stack-form" key={result?.created?.url ?? "form"}>
                  <CsrfField />
                  <input type="hidden" name="intent" value="create" />
                  <FormError message={errors["form"]} />
                  <Field name="name" label="Name" defaultValue={values?.name} error={errors["name"]} hint="Where the screen hangs, e.g. “Support floor”." />
                  <fieldset className="stack-choice" aria-describedby={errors["stack_ids"] ? "stack_ids-error" : undefined}>
                    <legend>Stacks, in rotation order</legend>
                    {errors["stack_ids"] ? <p className="field-error" id="stack_ids-error">Stacks {errors["stack_ids"]}</p> : null}
                    {stacks.map((s) => (
                      <div className="choice" key={s.id}>
                        <input type="checkbox" id={`tv-s-${s.id}`} name="stack_id" value={s.id} defaultChecked={chosen.has(s.id)} />
                        <label htmlFor={`tv-s-${s.id}`}>{s.name}</label>
                      </div>
                    ))}
                  </fieldset>
                  <Field
                    name="rotation_s"
                    label="Seconds per stack"
                    type="number"
                    required={false}
                    defaultValue={values?.rotation_s ?? String(tvLinkLimits.rotationDefault)}
                    error={errors["rotation_s"]}
                    hint={`${tvLinkLimits.rotationMin} to ${tvLinkLimits.rotationMax}.`}
                  />
                  <button type="submit" className="button">Create TV link</button>
                </Form>
              )}
          </section>
        )
        : <p className="muted read-only">Your role can view these links but not change them.</p>}
      <FramingSettings
        canFrame={canFrame}
        saved={frameAncestors}
        result={result?.intent === "framing" ? result : undefined}
      />
    </>
  )
}

/**
 * The sites allowed to show the TV links and public share pages inside their own pages (an iframe):
 * their browsers are told so by the pages' CSP `frame-ancestors`; any other site's frame stays empty.
 */
function FramingSettings({ canFrame, saved, result }: {
  readonly canFrame: boolean
  readonly saved: ReadonlyArray<string>
  readonly result: ActionResult | undefined
}) {
  const hint = `One origin a line, such as https://intranet.example.com (https; http only for localhost), at most ${maxFrameAncestors}. Empty: no site.`
  return (
    <section className="panel" aria-labelledby="tv-framing-title">
      <h2 id="tv-framing-title">Embedding in other sites</h2>
      <p className="muted">
        The sites listed here may show this organization's TV links and public share pages inside their own pages (in a frame), such as an
        intranet or a wall-display service. Other sites cannot, and no other page of statusgrid can be framed by any site.
      </p>
      {result?.framing?.saved !== undefined
        ? (
          <p className="form-success" role="status">
            {result.framing.saved.length === 0 ? "Saved: no site may embed these pages." : `Saved: ${result.framing.saved.length} site${result.framing.saved.length === 1 ? "" : "s"} may embed these pages.`}
          </p>
        )
        : null}
      {canFrame
        ? (
          <Form method="post" className="stack-form" key={result?.framing?.saved?.join(" ") ?? "framing"}>
            <CsrfField />
            <input type="hidden" name="intent" value="framing" />
            <FormError message={result?.errors["form"]} />
            <Control name="frame_ancestors" label="Sites allowed to embed" error={result?.errors["frame_ancestors"]} hint={hint}>
              {(attrs) => (
                <textarea {...attrs} rows={4} spellCheck={false} autoCapitalize="none" defaultValue={result?.framing?.text ?? saved.join("\n")} />
              )}
            </Control>
            <button type="submit" className="button">Save embedding</button>
          </Form>
        )
        : (
          <>
            {saved.length === 0
              ? <p>No site may embed these pages.</p>
              : (
                <ul aria-label="Sites allowed to embed">
                  {saved.map((o) => <li key={o}><code>{o}</code></li>)}
                </ul>
              )}
            <p className="muted read-only">Only Admins change where these pages may be embedded.</p>
          </>
        )}
    </section>
  )
}
