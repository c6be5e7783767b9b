import { Sources } from "#services/api/Sources.ts"
import { StackItemAdd, stackLimits, StackUpdate } from "#services/domain/api/Stacks.ts"
import { fromComponentStatus, fromMonitorState, fromSourceStatus } from "#services/domain/StatusWords.ts"
import { CustomSources } from "#services/orgs/CustomSources.ts"
import { Monitors } from "#services/orgs/Monitors.ts"
import { Stacks } from "#services/orgs/Stacks.ts"
import { Effect, Result, Schema } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/stack.ts"
import { pickableGroups } from "../../../components/catalog/ComponentTree.tsx"
import { CsrfField, Field, FormError } from "../../../components/Forms.tsx"
import stylesheet from "../../../components/settings/stacks.css?url"
import { usageText } from "../../../components/settings/usage.ts"
import { StatusBadge } from "../../../components/StatusBadge.tsx"
import { runEffect } from "../../../lib/effect.server.ts"
import { decodeForm, type FieldErrors, fieldError, formFields } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { isUuid, stackUsage } from "./stacks.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.stack.name ?? "Stack"} · Stacks · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }
]

const notFound = (id: string | undefined) => data({ message: `no stack ${id ?? ""}` }, { status: 404, statusText: "NotFound" })

/** Catalog search results shown in the picker. */
const pickerResults = 20
const maxSearch = 100

/**
 * One stack's settings through the service of the API's `GET /stacks/{id}`, its organization's component
 * usage, and the add-items picker: a catalog search (`?q=`, the API's `GET /sources?search=`) and one
 * chosen source's components, nested ones by their path (`?source=`).
 */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  if (!isUuid(params.id)) throw notFound(params.id)
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const url = new URL(request.url)
  const q = (url.searchParams.get("q") ?? "").trim().slice(0, maxSearch)
  const sourceKey = url.searchParams.get("source") ?? ""
  const { stack, usage, results, chosen, own } = await runEffect(context, request, Effect.all({
    stack: Stacks.use((s) => s.get(principal, params.id)),
    usage: stackUsage(principal),
    results: q === "" || !allowed["content.write"]
      ? Effect.succeed(null)
      : Sources.use((s) => s.list({ search: q, limit: pickerResults })).pipe(
        Effect.map((page) => page.data.map((s) => ({ key: s.key, name: s.name, components: s.components_count })))
      ),
    chosen: sourceKey === "" || !allowed["content.write"]
      ? Effect.succeed(null)
      : Sources.use((s) => Effect.all([s.get(sourceKey), s.components(sourceKey)])).pipe(
        Effect.map(([source, components]) => ({ key: source.key, name: source.name, groups: pickableGroups(components) })),
        Effect.orElseSucceed(() => ({ key: sourceKey, name: "", groups: [] as ReturnType<typeof pickableGroups>, missing: true as const }))
      ),
    own: !allowed["content.write"]
      ? Effect.succeed(null)
      : Effect.all({
        monitors: Monitors.use((m) => m.list(principal, { limit: 200 })),
        sources: CustomSources.use((c) => c.list(principal, { limit: 200 }))
      }, { concurrency: 2 })
  }, { concurrency: "unbounded" }))
  const shownMonitors = new Set(stack.items.flatMap((i) => i.monitor === undefined ? [] : [i.monitor.id]))
  const shownSources = new Set(stack.items.flatMap((i) => i.source === undefined ? [] : [i.source.key]))
  return {
    organization: { slug: organization.slug, name: organization.name },
    allowed: { write: allowed["content.write"], delete: allowed["content.delete"] },
    // The organization's own monitors and custom sources for the picker, those already shown marked.
    own: own === null ? null : {
      monitors: own.monitors.data.map((m) => ({ id: m.id, name: m.name, shown: shownMonitors.has(m.id) })),
      sources: own.sources.data.map((c) => ({ key: c.key, name: c.name, shown: shownSources.has(c.key) }))
    },
    origin: url.origin,
    usage,
    q,
    results,
    chosen,
    stack: {
      id: stack.id,
      name: stack.name,
      slug: stack.slug,
      description: stack.description,
      team: stack.team,
      visibility: stack.visibility,
      share_url: stack.share_url,
      health: stack.health.label,
      items: stack.items.map((i) => ({
        id: i.id,
        kind: i.kind,
        name: i.component?.name ?? i.source?.name ?? i.monitor?.name ?? "",
        detail: i.kind === "component" ? `component of ${i.component?.source_key ?? ""}` : i.kind === "source" ? "whole source" : "website monitor",
        status: i.kind === "component"
          ? fromComponentStatus(i.component?.status)
          : i.kind === "source"
          ? fromSourceStatus(i.source?.status)
          : fromMonitorState(i.monitor?.state)
      }))
    }
  }
}

type Intent = "update" | "share" | "unshare" | "remove" | "up" | "down" | "add" | "add-own" | "delete"
const intents: ReadonlyArray<Intent> = ["update", "share", "unshare", "remove", "up", "down", "add", "add-own", "delete"]

interface ActionResult {
  readonly intent: Intent | "unknown"
  readonly errors: FieldErrors
  readonly values?: Readonly<Record<string, string>>
  readonly notice?: string
}

/** The status of a service error shown in place, as the API answers it. */
const statusOf = (tag: string) => tag === "PlanLimitReached" ? 402 : tag === "Conflict" ? 409 : 404

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * Every change of the page, one `intent` per form, through the Stacks service the API's handlers call
 * (`PATCH /stacks/{id}`, `POST|DELETE /stacks/{id}/items`, `DELETE /stacks/{id}`): its permissions
 * (a Viewer's forged POST is the 403 page), plan limits (their message in place), audit entries.
 * Input is decoded by the API's Schemas; a bad one is a field error and nothing is saved.
 */
export async function action({ request, context, params }: Route.ActionArgs) {
  if (!isUuid(params.id)) throw notFound(params.id)
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  const rawIntent = form.get("intent")
  const intent = intents.find((i) => i === rawIntent)
  const fail = (result: Omit<ActionResult, "intent"> & { readonly intent?: ActionResult["intent"] }, status = 400) =>
    data<ActionResult>({ intent: intent ?? "unknown", ...result }, { status })
  if (intent === undefined) return fail({ errors: { form: "unknown action" } })
  const id = params.id
  const run = <A, E extends { readonly _tag: string; readonly message: string; readonly field?: string | undefined }>(
    effect: Effect.Effect<A, E, Stacks>
  ) =>
    runEffect(
      context,
      request,
      effect.pipe(
        Effect.map((value) => ({ ok: true as const, value })),
        // Forbidden (and a stack gone: NotFound of `id`) go to the error page; the rest is shown in place.
        Effect.catchIf(
          (e: E) => e._tag === "PlanLimitReached" || e._tag === "Conflict" || (e._tag === "NotFound" && e.field !== "id"),
          (e) => Effect.succeed({ ok: false as const, error: e })
        )
      )
    )

  switch (intent) {
    case "update": {
      const values = formFields(form, ["name", "description", "team"])
      const decoded = decodeForm(StackUpdate, values)
      if (!decoded.ok) return fail({ errors: decoded.errors, values })
      const done = await run(Stacks.use((s) => s.update(principal, id, decoded.value)))
      if (!done.ok) return fail({ errors: fieldError(done.error, "name"), values }, statusOf(done.error._tag))
      return { intent, errors: {}, notice: "Saved." } satisfies ActionResult
    }
    case "share":
    case "unshare": {
      await run(Stacks.use((s) => s.update(principal, id, { visibility: intent === "share" ? "public" : "private" })))
      return { intent, errors: {}, notice: intent === "share" ? "Share link created." : "Share link revoked: the old link answers 404." } satisfies ActionResult
    }
    case "remove":
    case "up":
    case "down": {
      const itemId = formFields(form, ["item_id"])["item_id"]!
      if (!isUuid(itemId)) return fail({ errors: { item_id: "must be a UUID" } })
      const done = await run(Stacks.use((s) => intent === "remove" ? s.removeItem(principal, id, itemId) : s.moveItem(principal, id, itemId, intent)))
      if (!done.ok) return fail({ errors: fieldError(done.error, "item_id") }, statusOf(done.error._tag))
      return { intent, errors: {} } satisfies ActionResult
    }
    case "add":
    case "add-own": {
      const values = formFields(form, ["source_key", "what"])
      let raw: Array<Record<string, string>>
      if (intent === "add-own") {
        const monitorIds = form.getAll("monitor").filter((v): v is string => typeof v === "string")
        const sourceKeys = form.getAll("own_source").filter((v): v is string => typeof v === "string")
        if (monitorIds.length === 0 && sourceKeys.length === 0) return fail({ errors: { own: "tick at least one monitor or custom source" } })
        raw = [...monitorIds.map((monitor_id) => ({ kind: "monitor", monitor_id })), ...sourceKeys.map((source_key) => ({ kind: "source", source_key }))]
      } else {
        const componentIds = form.getAll("component").filter((v): v is string => typeof v === "string")
        if (values["what"] !== "source" && values["what"] !== "components") {
          return fail({ errors: { what: "choose the whole source or some components" }, values })
        }
        if (values["what"] === "components" && componentIds.length === 0) return fail({ errors: { components: "tick at least one component" }, values })
        raw = values["what"] === "source"
          ? [{ kind: "source", source_key: values["source_key"]! }]
          : componentIds.map((component_id) => ({ kind: "component", component_id }))
      }
      // Each item decoded by the API's Schema: a well-formed key or UUID, the field its kind needs.
      const decoded = raw.map((item) => Schema.decodeUnknownResult(StackItemAdd)(item))
      const items = decoded.flatMap((r) => Result.isSuccess(r) ? [r.success] : [])
      if (items.length !== decoded.length) {
        const errors = intent === "add-own"
          ? { own: "a ticked item is not a valid monitor id or source key" }
          : values["what"] === "source" ? { source_key: "is not a source key" } : { components: "a ticked component is not a valid id" }
        return fail({ errors, values })
      }
      const done = await run(Effect.gen(function*() {
        const stacks = yield* Stacks
        let added = 0
        let present = 0
        for (const item of items) {
          const outcome = yield* stacks.addItem(principal, id, item).pipe(
            Effect.as("added" as const),
            Effect.catchIf((e) => e._tag === "Conflict", () => Effect.succeed("present" as const))
          )
          if (outcome === "added") added++
          else present++
        }
        return { added, present }
      }))
      if (!done.ok) {
        const e = done.error
        const fallback = intent === "add-own" ? "own" : "components"
        return fail({ errors: e._tag === "PlanLimitReached" ? { form: e.message } : fieldError(e, fallback), values }, statusOf(e._tag))
      }
      const { added, present } = done.value
      return {
        intent,
        errors: {},
        notice: `${added > 0 ? `Added ${plural(added, "item")}` : "Nothing new added"}${present > 0 ? ` (${plural(present, "item")} already there)` : ""}.`
      } satisfies ActionResult
    }
    case "delete": {
      await run(Stacks.use((s) => s.remove(principal, id)))
      return redirect(`/settings/${organization.slug}/stacks`)
    }
  }
}

export default function StackSettings({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, stack, allowed, usage, q, results, chosen, origin, own } = loaderData
  const result = actionData as ActionResult | undefined
  const errorsFor = (intents: ReadonlyArray<ActionResult["intent"]>): FieldErrors =>
    result !== undefined && intents.includes(result.intent) ? result.errors : {}
  const noticeFor = (intents: ReadonlyArray<ActionResult["intent"]>) =>
    result?.notice !== undefined && intents.includes(result.intent) ? <p className="form-success" role="status">{result.notice}</p> : null
  const updateErrors = errorsFor(["update"])
  const values = result?.intent === "update" ? result.values : undefined
  const itemErrors = errorsFor(["remove", "up", "down", "unknown"])
  const addErrors = errorsFor(["add"])
  const ownErrors = errorsFor(["add-own"])
  const addValues = result?.intent === "add" ? result.values : undefined
  const base = `/settings/${organization.slug}/stacks/${stack.id}`
  const shareUrl = stack.share_url === null ? null : `${origin}${stack.share_url}`

  return (
    <>
      <p className="eyebrow"><Link to={`/settings/${organization.slug}/stacks`}>Stacks</Link></p>
      <div className="section-head">
        <h1>{stack.name}</h1>
        <Link to={`/dashboard/${organization.slug}/stacks/${stack.slug}`}>Open its dashboard</Link>
      </div>

      <section className="panel" aria-labelledby="about-title">
        <h2 id="about-title">Settings</h2>
        {allowed.write
          ? (
            <Form method="post" className="stack-form" key={result?.intent === "update" && result.notice ? "saved" : "form"}>
              <CsrfField />
              <input type="hidden" name="intent" value="update" />
              {noticeFor(["update"])}
              <FormError message={updateErrors["form"]} />
              <Field name="name" label="Name" defaultValue={values?.["name"] ?? stack.name} error={updateErrors["name"]} hint={`Up to ${stackLimits.name} characters; the address (${stack.slug}) stays.`} />
              <Field name="description" label="Description" required={false} defaultValue={values?.["description"] ?? stack.description} error={updateErrors["description"]} />
              <Field name="team" label="Team" required={false} defaultValue={values?.["team"] ?? stack.team} error={updateErrors["team"]} />
              <button type="submit" className="button">Save</button>
            </Form>
          )
          : (
            <dl className="facts">
              <dt>Description</dt>
              <dd>{stack.description || <span className="muted">none</span>}</dd>
              <dt>Team</dt>
              <dd>{stack.team || <span className="muted">none</span>}</dd>
            </dl>
          )}
      </section>

      <section className="panel" aria-labelledby="items-title">
        <div className="section-head">
          <h2 id="items-title">Items <span className="muted">({stack.items.length})</span></h2>
          <p className="usage">{usageText(usage.components, "components in stacks", usage.plan)}</p>
        </div>
        <FormError message={itemErrors["form"] ?? itemErrors["item_id"]} />
        {stack.items.length === 0
          ? <p className="muted">Nothing in this stack yet.{allowed.write ? " Add sources or components below." : ""}</p>
          : (
            <ol className="item-rows">
              {stack.items.map((item, n) => (
                <li key={item.id} className="item-row">
                  <div className="item-name">
                    <strong>{item.name}</strong>
                    <span className="muted"> · {item.detail}</span>
                  </div>
                  <StatusBadge status={item.status} />
                  {allowed.write
                    ? (
                      <Form method="post" className="item-actions">
                        <CsrfField />
                        <input type="hidden" name="item_id" value={item.id} />
                        <button type="submit" name="intent" value="up" className="icon-button" disabled={n === 0} aria-label={`Move ${item.name} up`}>↑</button>
                        <button type="submit" name="intent" value="down" className="icon-button" disabled={n === stack.items.length - 1} aria-label={`Move ${item.name} down`}>↓</button>
                        <button type="submit" name="intent" value="remove" className="link-button danger" aria-label={`Remove ${item.name}`}>Remove</button>
                      </Form>
                    )
                    : null}
                </li>
              ))}
            </ol>
          )}
      </section>

      {allowed.write
        ? (
          <section className="panel" aria-labelledby="add-title">
            <h2 id="add-title">Add items</h2>
            {usage.components.full
              ? <p className="limit-note" role="note">This organization uses all {usage.components.limit} components its plan allows in stacks: remove some to add others.</p>
              : null}
            {noticeFor(["add"])}
            <Form method="get" className="picker-search" role="search" aria-label="Catalog sources">
              <div className="field">
                <label htmlFor="picker-q">Search the catalog</label>
                <input id="picker-q" name="q" type="search" defaultValue={q} maxLength={maxSearch} placeholder="AWS, GitHub, Stripe…" />
              </div>
              <button type="submit" className="button small">Search</button>
            </Form>
            {results === null
              ? null
              : results.length === 0
              ? <p className="muted">No source matches “{q}”.</p>
              : (
                <ul className="picker-results" aria-label="Matching sources">
                  {results.map((s) => (
                    <li key={s.key}>
                      <Link to={`${base}?${new URLSearchParams({ q, source: s.key }).toString()}#picked`} aria-current={chosen?.key === s.key ? "true" : undefined}>{s.name}</Link>
                      <span className="muted"> · {plural(s.components, "component")}</span>
                    </li>
                  ))}
                </ul>
              )}
            {chosen === null
              ? null
              : "missing" in chosen
              ? <p className="form-error">No source {chosen.key} in the catalog.</p>
              : (
                <Form method="post" className="add-form picked" id="picked" aria-labelledby="picked-title">
                  <CsrfField />
                  <input type="hidden" name="intent" value="add" />
                  <input type="hidden" name="source_key" value={chosen.key} />
                  <h3 id="picked-title">{chosen.name}</h3>
                  <FormError message={addErrors["form"] ?? addErrors["source_key"]} />
                  <fieldset>
                    <legend>What to add</legend>
                    <div className="choice">
                      <input type="radio" id="what-source" name="what" value="source" defaultChecked={(addValues?.["what"] ?? "source") === "source"} />
                      <label htmlFor="what-source">All of {chosen.name}</label>
                    </div>
                    {chosen.groups.length > 0
                      ? (
                        <div className="choice">
                          <input type="radio" id="what-components" name="what" value="components" defaultChecked={addValues?.["what"] === "components"} />
                          <label htmlFor="what-components">Only the components ticked below</label>
                        </div>
                      )
                      : null}
                    {addErrors["what"] ? <p className="field-error">{addErrors["what"]}</p> : null}
                  </fieldset>
                  {chosen.groups.length > 0
                    ? (
                      <fieldset className="component-picker" aria-describedby={addErrors["components"] ? "components-error" : undefined}>
                        <legend>Components</legend>
                        {addErrors["components"] ? <p className="field-error" id="components-error">{addErrors["components"]}</p> : null}
                        {chosen.groups.map((g) => (
                          <fieldset key={g.group}>
                            {g.group === "" ? <legend className="visually-hidden">Top level</legend> : <legend>{g.group}</legend>}
                            {g.items.map((c) => (
                              <div className="choice" key={c.id}>
                                <input type="checkbox" id={`c-${c.id}`} name="component" value={c.id} />
                                <label htmlFor={`c-${c.id}`}>{c.name}</label>
                              </div>
                            ))}
                          </fieldset>
                        ))}
                      </fieldset>
                    )
                    : null}
                  <button type="submit" className="button" disabled={usage.components.full}>Add to {stack.name}</button>
                </Form>
              )}
            {own === null ? null : (
              <Form method="post" className="stack-form own-picker">
                <CsrfField />
                <h3 id="own-title">Your monitors and custom sources</h3>
                {noticeFor(["add-own"])}
                <FormError message={ownErrors["form"]} />
                {own.monitors.length === 0 && own.sources.length === 0
                  ? (
                    <p className="muted">
                      None yet: add <Link to={`/settings/${organization.slug}/monitors`}>website monitors</Link> or{" "}
                      <Link to={`/settings/${organization.slug}/sources`}>custom sources</Link> first.
                    </p>
                  )
                  : (
                    <>
                      {ownErrors["own"] ? <p className="field-error" id="own-error">{ownErrors["own"]}</p> : null}
                      {own.monitors.length === 0 ? null : (
                        <fieldset aria-describedby={ownErrors["own"] ? "own-error" : undefined}>
                          <legend>Website monitors</legend>
                          {own.monitors.map((m) => (
                            <div className="choice" key={m.id}>
                              <input type="checkbox" id={`own-m-${m.id}`} name="monitor" value={m.id} disabled={m.shown} />
                              <label htmlFor={`own-m-${m.id}`}>{m.name}{m.shown ? " (in this stack)" : ""}</label>
                            </div>
                          ))}
                        </fieldset>
                      )}
                      {own.sources.length === 0 ? null : (
                        <fieldset aria-describedby={ownErrors["own"] ? "own-error" : undefined}>
                          <legend>Custom sources</legend>
                          {own.sources.map((c) => (
                            <div className="choice" key={c.key}>
                              <input type="checkbox" id={`own-s-${c.key}`} name="own_source" value={c.key} disabled={c.shown} />
                              <label htmlFor={`own-s-${c.key}`}>{c.name}{c.shown ? " (in this stack)" : ""}</label>
                            </div>
                          ))}
                        </fieldset>
                      )}
                      <button type="submit" name="intent" value="add-own" className="button" disabled={usage.components.full}>Add ticked to {stack.name}</button>
                    </>
                  )}
              </Form>
            )}
          </section>
        )
        : null}

      <section className="panel" aria-labelledby="share-title">
        <h2 id="share-title">Public share link</h2>
        {noticeFor(["share", "unshare"])}
        {shareUrl === null
          ? <p>This stack is private: only members of {organization.name} see it.</p>
          : (
            <>
              <p>Anyone with this link sees the stack's live status (and nothing else of {organization.name}):</p>
              <p className="share-url"><a href={shareUrl} data-testid="share-url">{shareUrl}</a></p>
            </>
          )}
        {allowed.write
          ? (
            <Form method="post">
              <CsrfField />
              {shareUrl === null
                ? <button type="submit" name="intent" value="share" className="button">Create share link</button>
                : <button type="submit" name="intent" value="unshare" className="button secondary">Revoke share link</button>}
            </Form>
          )
          : null}
      </section>

      {allowed.delete
        ? (
          <section className="panel danger-zone" aria-labelledby="delete-title">
            <h2 id="delete-title">Delete this stack</h2>
            <p>Its items, share link and maintenance windows go with it; the sources and monitors stay.</p>
            <Form method="post">
              <CsrfField />
              <button type="submit" name="intent" value="delete" className="button danger">Delete {stack.name}</button>
            </Form>
          </section>
        )
        : null}
      {!allowed.write ? <p className="muted read-only">Your role can view this stack but not change it.</p> : null}
    </>
  )
}
