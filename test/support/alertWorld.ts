import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { ackPurpose } from "../../services/domain/api/Alerts.ts"
import type { NotificationPayload } from "../../services/domain/Channel.ts"
import { Sessions } from "../../services/identity/Sessions.ts"
import { Users } from "../../services/identity/Users.ts"
import { prepareAlert, writeAlerts } from "../../services/notifier/AlertStore.ts"
import { links } from "../../services/notifier/Compose.ts"
import { ApiKeys } from "../../services/orgs/ApiKeys.ts"
import { Members } from "../../services/orgs/Members.ts"
import { Organizations } from "../../services/orgs/Organizations.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { waitFor } from "./eventually.ts"
import { freshDatabase } from "./stores.ts"

/**
 * What the portal's alert and access pages need around a real `statusgrid
 * start` (test/support/browser.ts): its database (a fresh one on the test
 * PostgreSQL, so the test reaches it too), its secrets key (to sign
 * acknowledgment links as its notifier does), and the test's own handle on
 * the domain services to make an organization, channels, rules, alerts and
 * invitations the way the product makes them.
 */

class TestDatabase extends Context.Service<TestDatabase, string>()("test/alertWorld/TestDatabase") {}

export const secretsKey = randomBytes(32).toString("base64")

const database = Layer.unwrap(Effect.gen(function*() {
  return Postgres.layerServer(yield* TestDatabase, { maxConnections: 4 })
})).pipe(Layer.provideMerge(Layer.effect(TestDatabase, freshDatabase)))

const services = Layer.mergeAll(Users.layer, Sessions.layer, ApiKeys.layer, Members.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Organizations.layer, Layer.succeed(SecretBox, SecretBox.fromKey(Buffer.from(secretsKey, "base64"))))),
  Layer.provideMerge(database)
)

export type WorldRuntime = ManagedRuntime.ManagedRuntime<Layer.Success<typeof services>, never>

/** The test's runtime over a fresh database; `databaseUrl` is for the server's DATABASE_URL. */
export const worldRuntime = async () => {
  const runtime: WorldRuntime = ManagedRuntime.make(services as Layer.Layer<Layer.Success<typeof services>>)
  const databaseUrl = await runtime.runPromise(Effect.gen(function*() {
    return yield* TestDatabase
  }))
  return { runtime, databaseUrl }
}

/** A webhook receiver on this machine that answers 200 and counts what it got, by path. */
export const startReceiver = async () => {
  const got = new Map<string, number>()
  const server: Server = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      got.set(request.url ?? "/", (got.get(request.url ?? "/") ?? 0) + 1)
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    stop: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}

export interface Organization {
  readonly id: string
  readonly slug: string
  readonly name: string
  readonly adminKey: string
  readonly admin: { readonly email: string; readonly password: string; readonly name: string; readonly id: string }
}

/** `METHOD /api/v1<path>` on the running server with an API key; the JSON body. */
export const api = async (base: string, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>
}

/** An Enterprise organization (escalation is an Enterprise feature) with its admin, who signs in with a password. */
export const makeOrganization = (runtime: WorldRuntime, name: string, slug: string) =>
  runtime.runPromise(Effect.gen(function*() {
    const users = yield* Users
    const admin = { email: `${slug}-admin@example.com`, password: "correct horse battery", name: "Grace Hopper" }
    const user = yield* users.signUp(admin.email, admin.password, admin.name)
    const organization = yield* users.createOrganization(user.id, { name, slug })
    yield* Organizations.use((o) => o.setPlanAsOperator(slug, "enterprise", "test-operator@localhost"))
    const adminKey = yield* ApiKeys.use((k) => k.issue(organization.id, "test admin key", "admin"))
    return { id: organization.id, slug, name, adminKey, admin: { ...admin, id: user.id } } satisfies Organization
  }))

/** A session of `userId`, as the portal's sign-in creates it: the `Cookie` header value. */
export const sessionCookie = (runtime: WorldRuntime, userId: string) =>
  runtime.runPromise(Sessions.use((s) => s.create(userId)).pipe(Effect.map(({ token }) => `sg_session=${token}`)))

export interface WrittenAlert {
  readonly id: string
  readonly title: string
  readonly url: string
  readonly shortUrl: string
  /** The signed acknowledgment link of its message (escalating alerts only). */
  readonly ackUrl: string | undefined
}

/**
 * An alert of `rule` about a component going from operational to critical,
 * written by the notifier's own AlertStore (the matcher's last step): the
 * message's dashboard link, short link and signed acknowledgment link are
 * the ones the notifier makes. The running server's deliverer then sends it.
 */
export const writeAlert = (
  runtime: WorldRuntime,
  publicUrl: string,
  input: {
    readonly organization: Organization
    readonly ruleId: string
    readonly channelIds: ReadonlyArray<string>
    readonly escalation: ReadonlyArray<{ readonly delay_s: number; readonly channel_ids: ReadonlyArray<string> }> | null
    readonly stack: { readonly id: string; readonly name: string; readonly slug: string } | null
    readonly component: string
  }
) =>
  runtime.runPromise(Effect.gen(function*() {
    const box = yield* SecretBox
    const sql = yield* SqlClient
    const now = new Date().toISOString()
    const link = links(publicUrl, input.organization.slug)
    const payload: NotificationPayload = {
      event: "component.status_changed",
      timestamp: now,
      stack: input.stack ?? { id: "", name: "", slug: "" },
      component: { id: crypto.randomUUID(), name: input.component, previous_status: "operational", current_status: "critical" },
      incident: { id: "inc-1", created_at: now, resolved_at: null, title: "Elevated card decline rates", status: "investigating", impact: "major", update_count: 1 }
    }
    const where = input.stack === null ? "" : ` in ${input.stack.name}`
    const title = `🔴 ${input.component} is critical (was operational)`
    const prepared = prepareAlert({
      organization_id: input.organization.id,
      rule_id: input.ruleId,
      trigger: "component.critical",
      subject: `component:${payload.component.id}`,
      level: "critical",
      payload,
      message: {
        event: payload.event,
        title,
        text: `${input.component}${where}: operational → critical.\nIncident: Elevated card decline rates (investigating).`,
        url: input.stack === null ? link.dashboard : link.stack(input.stack.slug),
        level: "critical",
        payload
      },
      event_id: `evt-${crypto.randomUUID()}`,
      key: `evt-${crypto.randomUUID()}`,
      channel_ids: input.channelIds,
      escalation: input.escalation
    }, { publicUrl, ackToken: (id) => box.sign(ackPurpose, id) })
    yield* sql.withTransaction(writeAlerts([prepared]))
    return {
      id: prepared.id,
      title,
      url: prepared.message.url,
      shortUrl: prepared.message.shortUrl!,
      ackUrl: /Acknowledge: (\S+)/.exec(prepared.message.text)?.[1]
    } satisfies WrittenAlert
  }))

/** Waits until every delivery of the alert is `delivered` (the running server's deliverer sent it). */
export const deliveredAll = (runtime: WorldRuntime, alertId: string) =>
  runtime.runPromise(waitFor(20_000, `alert ${alertId} delivered`, Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ status: string }>`SELECT status FROM deliveries WHERE alert_id = ${alertId}::uuid`
    return rows.length > 0 && rows.every((r) => r.status === "delivered") ? rows.length : undefined
  })))

/** Runs SQL on the world's database (e.g. to age an invitation past its expiry). */
export const onDatabase = <A>(runtime: WorldRuntime, f: (sql: SqlClient) => Effect.Effect<A, unknown>) =>
  runtime.runPromise(Effect.gen(function*() {
    return yield* f(yield* SqlClient)
  }).pipe(Effect.orDie))
