import { Channels } from "#services/orgs/Channels.ts"
import { Organizations } from "#services/orgs/Organizations.ts"
import { Effect } from "effect"
import { data, Form, Link, redirect } from "react-router"
import type { Route } from "./+types/list.ts"
import { CsrfField, Field, FormError } from "../../../components/Forms.tsx"
import { ChannelFields } from "../../../components/settings/channels/ChannelFields.tsx"
import { channelFields, channelTypeLabels, formChannelTypes, isFormChannelType } from "../../../components/settings/channels/fields.ts"
import stacksStylesheet from "../../../components/settings/stacks.css?url"
import { runEffect } from "../../../lib/effect.server.ts"
import { type FieldErrors, withoutFieldName } from "../../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../../lib/member.server.ts"
import { decodeChannelCreate, formFieldOf } from "./channelForm.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stacksStylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Channels · ${loaderData?.organization.name ?? "Settings"} · statusgrid` }]

/** The organization's channels (the API's `GET /channels`), the plan's channel types, and the new-channel form of `?type=`. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal, allowed } = await requireMember(context, request, params.org)
  const url = new URL(request.url)
  const type = url.searchParams.get("type")
  const { channels, org } = await runEffect(context, request, Effect.all({
    channels: Channels.use((c) => c.list(principal, { limit: 200 })),
    org: Organizations.use((o) => o.get(principal))
  }, { concurrency: 2 }))
  return {
    organization: { slug: organization.slug, name: organization.name },
    canWrite: allowed["notifications.manage"],
    plan: org.plan,
    allowedTypes: org.channel_types,
    type: isFormChannelType(type) ? type : null,
    channels: channels.data.map((c) => ({ id: c.id, name: c.name, type: c.type, enabled: c.enabled, created_at: c.created_at }))
  }
}

interface ActionResult {
  readonly errors: FieldErrors
  readonly typed?: Record<string, string>
  /** A webhook channel whose signing secret was generated: shown here once, never again. */
  readonly created?: { readonly id: string; readonly name: string; readonly secret: string }
}

/** Creates a channel through the API's service (permission, plan's channel types, audit). */
export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { organization, principal } = await requireMemberAction(context, request, form, params.org)
  const type = String(form.get("type") ?? "")
  if (!isFormChannelType(type)) return data<ActionResult>({ errors: { type: "must be one of the listed types" } }, { status: 400 })
  const decoded = decodeChannelCreate(type, form)
  if (!decoded.ok) return data<ActionResult>({ errors: decoded.errors, typed: decoded.typed }, { status: 400 })
  const outcome = await runEffect(context, request, Channels.use((c) => c.create(principal, decoded.value)).pipe(
    Effect.map((channel) => ({ ok: true as const, channel })),
    Effect.catchTags({
      InvalidParameter: (e) => Effect.succeed({ ok: false as const, errors: { [formFieldOf(e.field)]: withoutFieldName(e.field, e.message) } as FieldErrors }),
      PlanLimitReached: (e) => Effect.succeed({ ok: false as const, errors: { form: e.message } as FieldErrors })
    })
  ))
  if (!outcome.ok) return data<ActionResult>({ errors: outcome.errors, typed: decoded.typed }, { status: 400 })
  const secret = "signing_secret" in outcome.channel ? outcome.channel.signing_secret : undefined
  // Without a secret to show once, straight to the new channel's page (its Test button).
  if (secret === undefined) return redirect(`/settings/${organization.slug}/channels/${outcome.channel.id}?created`)
  return { errors: {}, created: { id: outcome.channel.id, name: outcome.channel.name, secret } } satisfies ActionResult
}

export default function ChannelsPage({ loaderData, actionData }: Route.ComponentProps) {
  const { organization, canWrite, channels, type, allowedTypes, plan } = loaderData
  const result = actionData as ActionResult | undefined
  const base = `/settings/${organization.slug}/channels`
  const errors = result?.errors ?? {}
  return (
    <>
      <section className="panel" aria-labelledby="channels-title">
        <div className="section-head">
          <h1 id="channels-title">Notification channels</h1>
          <Link to={`/settings/${organization.slug}/notifications`}>Notification center</Link>
        </div>
        <p className="muted">Where alerts go. Rules choose channels; a channel can be tested on its page.</p>
        {channels.length === 0
          ? <p>No channel yet.</p>
          : (
            <ul className="stack-rows">
              {channels.map((c) => (
                <li key={c.id} className="stack-row">
                  <div>
                    <h2><Link to={`${base}/${c.id}`}>{c.name}</Link></h2>
                    <p className="muted">{channelTypeLabels[c.type]}{c.enabled ? "" : " · disabled"}</p>
                  </div>
                </li>
              ))}
            </ul>
          )}
      </section>
      {canWrite
        ? (
          <section className="panel" aria-labelledby="channel-create-title">
            <h2 id="channel-create-title">New channel</h2>
            {result?.created
              ? (
                <div className="form-success" role="status">
                  <p>Created <Link to={`${base}/${result.created.id}`}>{result.created.name}</Link>. Its signing secret, shown this once:</p>
                  <p><code className="share-url" data-testid="signing-secret">{result.created.secret}</code></p>
                  <p>Receivers check the X-Service-Signature header with it (HMAC-SHA256).</p>
                </div>
              )
              : null}
            <nav aria-label="Channel type" className="type-choice">
              <ul>
                {formChannelTypes.map((t) => {
                  const allowed = allowedTypes.includes(t)
                  return (
                    <li key={t}>
                      {allowed
                        ? <Link to={`${base}?type=${t}`} aria-current={type === t ? "page" : undefined}>{channelTypeLabels[t]}</Link>
                        : <span className="muted" title={`Not on the ${plan} plan`}>{channelTypeLabels[t]} (not on the {plan} plan)</span>}
                    </li>
                  )
                })}
              </ul>
            </nav>
            {type === null
              ? <p>Choose a type. Web Push channels are made by subscribing a browser or phone on your profile.</p>
              : (
                <Form method="post" className="stack-form channel-form" key={result?.created?.id ?? type}>
                  <CsrfField />
                  <input type="hidden" name="type" value={type} />
                  <FormError message={errors["form"] ?? errors["type"]} />
                  <Field name="name" label="Name" defaultValue={result?.typed?.["name"]} error={errors["name"]} hint="How rules and the notification center call it, e.g. “On-call phone”." />
                  <ChannelFields fields={channelFields[type]} values={result?.typed ?? {}} errors={errors} storedSecrets={false} />
                  <button type="submit" className="button">Create {channelTypeLabels[type]} channel</button>
                </Form>
              )}
          </section>
        )
        : <p className="muted read-only">Your role can view channels but not change them.</p>}
    </>
  )
}
