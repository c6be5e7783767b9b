import { can } from "#services/domain/Permissions.ts"
import { ChannelCreate } from "#services/domain/api/Notifications.ts"
import { WebPushPublicKey } from "#services/notifier/WebPushPublicKey.ts"
import { Channels } from "#services/orgs/Channels.ts"
import { Effect, Schema } from "effect"
import { type PortalContext, runEffect } from "./effect.server.ts"
import { decodeForm, type FieldErrors, withoutFieldName } from "./forms.server.ts"
import { clientIp, principalOf } from "./member.server.ts"
import type { Viewer } from "./session.server.ts"

/**
 * The profile's Web Push devices: a browser's or phone's subscription becomes
 * a `webpush` notification channel of one of the person's organizations,
 * through the API's Channels service (the permission table's
 * "notifications.manage", the plan's channel types, the audit log), so that
 * rules can target it like any channel. Removing it deletes that channel.
 */

export interface PushDevice {
  readonly id: string
  readonly name: string
  readonly organization: { readonly slug: string; readonly name: string }
  readonly created_at: string
  /** Whether the person's role may remove it (and subscribe devices in its organization). */
  readonly canManage: boolean
}

export interface PushDevicesData {
  /** The VAPID public key browsers subscribe with (base64url). */
  readonly publicKey: string
  /** The organizations a device can be subscribed in (the role manages notifications). */
  readonly organizations: ReadonlyArray<{ readonly slug: string; readonly name: string }>
  /** The person's organizations whose role does not manage notifications (named on the page, not offered). */
  readonly readOnly: ReadonlyArray<{ readonly slug: string; readonly name: string; readonly role: string }>
  readonly devices: ReadonlyArray<PushDevice>
}

/** Every organization's Web Push channels the person can see, and where they may subscribe one. */
export const pushDevices = (context: PortalContext, request: Request, viewer: Viewer): Promise<PushDevicesData> =>
  runEffect(context, request, Effect.gen(function*() {
    const publicKey = yield* WebPushPublicKey
    const perOrganization = yield* Effect.forEach(viewer.organizations, (organization) =>
      Effect.gen(function*() {
        const principal = yield* principalOf(viewer, organization.id, clientIp(request))
        const channels = yield* Channels.use((c) => c.list(principal, { limit: 200 }, "webpush"))
        const canManage = can(principal.role, "notifications.manage")
        return {
          organization: { slug: organization.slug, name: organization.name, role: principal.role },
          canManage,
          devices: channels.data.map((c): PushDevice => ({
            id: c.id,
            name: c.name,
            organization: { slug: organization.slug, name: organization.name },
            created_at: c.created_at,
            canManage
          }))
        }
      }), { concurrency: 4 })
    return {
      publicKey,
      organizations: perOrganization.filter((o) => o.canManage).map((o) => ({ slug: o.organization.slug, name: o.organization.name })),
      readOnly: perOrganization.filter((o) => !o.canManage).map((o) => o.organization),
      devices: perOrganization.flatMap((o) => o.devices)
    }
  }))

export type PushOutcome =
  | { readonly intent: "push-subscribe"; readonly errors: FieldErrors; readonly subscribed?: { readonly id: string; readonly name: string; readonly organization: string } }
  | { readonly intent: "push-remove"; readonly errors: FieldErrors; readonly removed?: string }

const text = (form: FormData, name: string) => {
  const value = form.get(name)
  return typeof value === "string" ? value.trim() : ""
}

const DeviceName = Schema.Struct({ name: ChannelCreate.fields.name })
const isUuid = Schema.is(Schema.String.check(Schema.isUUID()))

/** The organization of the form's `organization` field among the person's own, or undefined. */
const organizationIn = (viewer: Viewer, slug: string) => viewer.organizations.find((o) => o.slug === slug)

/**
 * `push-subscribe`: the subscription (`endpoint`, `p256dh`, `auth` from the
 * browser's `PushSubscription.toJSON()`) and a device name become a channel.
 * Bad input comes back as field errors; a role without "notifications.manage"
 * gets the service's 403, as from the API.
 */
export const subscribeDevice = async (context: PortalContext, request: Request, viewer: Viewer, form: FormData): Promise<PushOutcome> => {
  const intent = "push-subscribe" as const
  const organization = organizationIn(viewer, text(form, "organization"))
  if (organization === undefined) return { intent, errors: { organization: "must be one of your organizations" } }
  // The name as the API's ChannelCreate takes it (the service trusts a decoded body).
  const decoded = decodeForm(DeviceName, { name: text(form, "name") })
  if (!decoded.ok) return { intent, errors: decoded.errors }
  const name = decoded.value.name
  const settings = { endpoint: text(form, "endpoint"), keys: { p256dh: text(form, "p256dh"), auth: text(form, "auth") } }
  return runEffect(context, request, Effect.gen(function*() {
    const principal = yield* principalOf(viewer, organization.id, clientIp(request))
    const channel = yield* Channels.use((c) => c.create(principal, { type: "webpush", name, settings }))
    return { intent, errors: {}, subscribed: { id: channel.id, name: channel.name, organization: organization.name } } satisfies PushOutcome
  }).pipe(Effect.catchTags({
    InvalidParameter: (e) =>
      Effect.succeed<PushOutcome>({
        intent,
        errors: e.field === "name"
          ? { name: withoutFieldName(e.field, e.message) }
          : { form: `This browser's subscription was refused: ${e.message}` }
      }),
    PlanLimitReached: (e) => Effect.succeed<PushOutcome>({ intent, errors: { form: e.message } })
  })))
}

/** `push-remove`: deletes the device's channel (the service checks the role). */
export const removeDevice = async (context: PortalContext, request: Request, viewer: Viewer, form: FormData): Promise<PushOutcome> => {
  const intent = "push-remove" as const
  const organization = organizationIn(viewer, text(form, "organization"))
  if (organization === undefined) return { intent, errors: { form: "The device's organization is not one of yours." } }
  const id = text(form, "id")
  if (!isUuid(id)) return { intent, errors: { form: "That device is not one of the organization's." } }
  return runEffect(context, request, Effect.gen(function*() {
    const principal = yield* principalOf(viewer, organization.id, clientIp(request))
    const channel = yield* Channels.use((c) => c.get(principal, id))
    if (channel.type !== "webpush") return { intent, errors: { form: "That channel is not a Web Push device." } } satisfies PushOutcome
    yield* Channels.use((c) => c.remove(principal, id))
    return { intent, errors: {}, removed: id } satisfies PushOutcome
  }))
}
