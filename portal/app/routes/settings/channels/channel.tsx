import { ChannelUpdate, type Delivery } from "#services/domain/api/Notifications.ts"
import { Channels } from "#services/orgs/Channels.ts"
import { Effect, Schedule } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/channel.ts"
import { DeliveryRows } from "../../../components/settings/channels/DeliveryRows.tsx"
import { ChannelFields } from "../../../components/settings/channels/ChannelFields.tsx"
import { channelFields, channelTypeLabels, isFormChannelType } from "../../../components/settings/channels/fields.ts"
import { CsrfField, Field, FormError } from "../../../components/Forms.tsx"
import alertsStylesheet from "../../../components/alerts/alerts.css?url"
import stacksStylesheet from "../../../components/settings/stacks.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import { decodeForm, type FieldErrors, withoutFieldName } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { isUuid } from "../stacks/stacks.server.ts"
import { formFieldOf, settingsFromForm } from "./channelForm.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stacksStylesheet }, { rel: "stylesheet", href: alertsStylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.channel.name ?? "Channel"} · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }
]

const notFound = () => data({ message: "no such channel" }, { status: 404, statusText: "Not Found" })

/** A stored setting as the form's text: lists one per line; secrets and headers never. */
const formValue = (value: unknown): string =>
  Array.isArray(value) ? value.join("\n") : typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : ""

/** One channel (the API's `GET /channels/{id}`) with its latest deliveries (`GET /deliveries?channel_id=`). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  if (!isUuid(params.id)) throw notFound()
  const loaded = await runEffect(context, request, Effect.all({
    channel: Channels.use((c) => c.get(principal, params.id)).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined))),
    deliveries: Channels.use((c) => c.deliveries(principal, { limit: 10, channel_id: params.id }))
  }, { concurrency: 2 }))
  if (loaded.channel === undefined) throw notFound()
  const channel = loaded.channel
  const fields = isFormChannelType(channel.type) ? channelFields[channel.type] : []
  const settings = channel.settings as Readonly<Record<string, unknown>>
  return {
    organization: { slug: organization.slug, name: organization.name },
    allowed: { write: allowed["notifications.manage"], remove: allowed["notifications.manage"] },
    channel: { id: channel.id, name: channel.name, type: channel.type, enabled: channel.enabled },
    editable: isFormChannelType(channel.type),
    values: Object.fromEntries(fields.filter((f) => f.kind !== "secret" && f.kind !== "lines").map((f) => [f.name, formValue(settings[f.name])])),
    deliveries: loaded.deliveries.data,
    created: new URL(request.url).searchParams.has("created")
  }
}

interface ActionResult {
  readonly intent: string
  readonly errors: FieldErrors
  readonly typed?: Record<string, string>
  readonly test?: Delivery
  readonly saved?: boolean
}

/** How long the Test button waits for the outcome before showing "still sending". */
const testWaitMs = 10_000

/**
 * Save (the API's PATCH: blank secrets keep the stored ones), Test (the API's
 * `POST /channels/{id}/test`, then the delivery's outcome, waited for up to
 * 10 s so that the page shows it without JavaScript), or delete (Admin).
 */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  if (!isUuid(params.id)) throw notFound()
  const intent = String(form.get("intent") ?? "")
  if (intent === "delete") {
    await runEffect(context, request, Channels.use((c) => c.remove(principal, params.id)).pipe(Effect.catchTag("NotFound", () => Effect.void)))
    return redirect(`/settings/${organization.slug}/channels`)
  }
  if (intent === "test") {
    const outcome = await runEffect(context, request, Effect.gen(function*() {
      const channels = yield* Channels
      const queued = yield* channels.sendTest(principal, params.id)
      const settled = yield* channels.delivery(principal, queued.id).pipe(
        Effect.repeat({ schedule: Schedule.spaced("250 millis"), until: (d) => d.status !== "pending" && d.status !== "sending" }),
        Effect.timeoutOption(testWaitMs)
      )
      return { ok: true as const, delivery: settled._tag === "Some" ? settled.value : queued }
    }).pipe(Effect.catchTags({
      Conflict: (e) => Effect.succeed({ ok: false as const, errors: { form: e.message } as FieldErrors }),
      PlanLimitReached: (e) => Effect.succeed({ ok: false as const, errors: { form: e.message } as FieldErrors })
    })))
    if (!outcome.ok) return data<ActionResult>({ intent, errors: outcome.errors }, { status: 409 })
    return { intent, errors: {}, test: outcome.delivery } satisfies ActionResult
  }
  if (intent !== "save") return data<ActionResult>({ intent: "unknown", errors: { form: "unknown action" } }, { status: 400 })
  const type = String(form.get("type") ?? "")
  if (!isFormChannelType(type)) return data<ActionResult>({ intent, errors: { form: "this channel type is not edited here" } }, { status: 400 })
  const { settings, typed, errors } = settingsFromForm(type, form)
  const name = String(form.get("name") ?? "")
  typed["name"] = name
  // The name as the API's ChannelUpdate takes it (the service trusts a decoded patch).
  const decoded = decodeForm(ChannelUpdate, { name, enabled: form.get("enabled") === "on", settings } as unknown as Record<string, string>)
  if (!decoded.ok || Object.keys(errors).length > 0) {
    return data<ActionResult>({ intent, errors: { ...(decoded.ok ? {} : decoded.errors), ...errors }, typed }, { status: 400 })
  }
  const patch = decoded.value
  const outcome = await runEffect(context, request, Channels.use((c) => c.update(principal, params.id, patch)).pipe(
    Effect.map(() => ({ ok: true as const })),
    Effect.catchTags({
      InvalidParameter: (e) => Effect.succeed({ ok: false as const, errors: { [formFieldOf(e.field)]: withoutFieldName(e.field, e.message) } as FieldErrors }),
      PlanLimitReached: (e) => Effect.succeed({ ok: false as const, errors: { form: e.message } as FieldErrors }),
      NotFound: () => Effect.succeed({ ok: false as const, errors: { form: "the channel was deleted" } as FieldErrors })
    })
  ))
  if (!outcome.ok) return data<ActionResult>({ intent, errors: outcome.errors, typed }, { status: 400 })
  return { intent, errors: {}, saved: true } satisfies ActionResult
}

export default function ChannelPage({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, allowed, channel, editable, values, deliveries, created } = loaderData
  const result = actionData as ActionResult | undefined
  const errors = result?.intent === "save" ? result.errors : {}
  const test = result?.test
  return (
    <>
      <section className="panel" aria-labelledby="channel-title">
        <p className="muted"><Link to={`/settings/${organization.slug}/channels`}>Channels</Link> ›</p>
        <h1 id="channel-title">{channel.name}</h1>
        <p className="muted">{channelTypeLabels[channel.type]}{channel.enabled ? "" : " · disabled: rules skip it"}</p>
        {created ? <p className="form-success" role="status">Created {channel.name}. Send a test to check it.</p> : null}
        {result?.saved ? <p className="form-success" role="status">Saved.</p> : null}
        {allowed.write
          ? (
            <Form method="post" className="inline-actions">
              <CsrfField />
              <button type="submit" name="intent" value="test" className="button">Send a test notification</button>
            </Form>
          )
          : null}
        {result?.intent === "test" ? <FormError message={result.errors["form"]} /> : null}
        {test
          ? (
            <div className={test.status === "delivered" ? "form-success" : "form-error"} role="status" data-testid="test-result">
              Test {test.status === "delivered" ? "delivered" : test.status === "failed" ? "failed" : `still ${test.status}`}
              {test.last_error === null ? "" : `: ${test.last_error}`}
              {test.status === "delivered" ? ` after ${test.attempts} attempt${test.attempts === 1 ? "" : "s"}.` : "."}
            </div>
          )
          : null}
      </section>
      <section className="panel" aria-labelledby="deliveries-title">
        <div className="section-head">
          <h2 id="deliveries-title">Latest deliveries</h2>
          <Link to={`/settings/${organization.slug}/notifications?channel=${channel.id}`}>All in the notification center</Link>
        </div>
        <DeliveryRows deliveries={deliveries} org={organization.slug} canRetry={false} showChannel={false} />
      </section>
      {allowed.write && editable
        ? (
          <section className="panel" aria-labelledby="channel-edit-title">
            <h2 id="channel-edit-title">Settings</h2>
            <Form method="post" className="stack-form channel-form">
              <CsrfField />
              <input type="hidden" name="intent" value="save" />
              <input type="hidden" name="type" value={channel.type} />
              <FormError message={errors["form"]} />
              <Field name="name" label="Name" defaultValue={result?.typed?.["name"] ?? channel.name} error={errors["name"]} />
              <div className="choice">
                <input type="checkbox" id="field-enabled" name="enabled" defaultChecked={channel.enabled} />
                <label htmlFor="field-enabled">Enabled</label>
              </div>
              {isFormChannelType(channel.type)
                ? <ChannelFields fields={channelFields[channel.type]} values={result?.typed ?? values} errors={errors} storedSecrets />
                : null}
              <button type="submit" className="button">Save</button>
            </Form>
          </section>
        )
        : null}
      {allowed.remove
        ? (
          <section className="panel" aria-labelledby="channel-delete-title">
            <h2 id="channel-delete-title">Delete</h2>
            <p className="muted">Rules stop sending to it; its deliveries go with it.</p>
            <Form method="post">
              <CsrfField />
              <button type="submit" name="intent" value="delete" className="button danger">Delete {channel.name}</button>
            </Form>
          </section>
        )
        : null}
    </>
  )
}
