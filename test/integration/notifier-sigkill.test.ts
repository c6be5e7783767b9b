import { Effect, type Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Redis } from "ioredis"
import { randomBytes } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "vitest"
import type { StatusEvent } from "../../services/domain/Event.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { childEnv, freePort, type Running, runCli, startService } from "../support/process.ts"
import { freshDatabase, tempDir } from "../support/stores.ts"
import { waitFor } from "../support/eventually.ts"

/**
 * The notifier killed with SIGKILL (no shutdown, no cleanup) at its worst
 * moments, with real `statusgrid start` processes on PostgreSQL and Redis:
 * nothing is lost, and every copy of a notification carries one idempotency key.
 */

/** Redis database of this file only: the other test files use database 0. */
const redisUrl = "redis://127.0.0.1:6379/11"
const leaseMs = 3_000
/** Processes sharing a database share the key of its sealed channel secrets and keyed API key hashes (each has its own DATA_DIR). */
const secretsKey = randomBytes(32).toString("base64")

interface Received {
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
  /** When it arrived (ms since the epoch). */
  readonly at: number
}

/**
 * A webhook receiver on 127.0.0.1:`port` (0: any) recording every request at
 * `url`; it answers 200, except the requests for which `hang(index)` is true,
 * which it never answers.
 */
const receiver = (port: number, hang: (index: number) => boolean = () => false) =>
  Effect.acquireRelease(
    Effect.callback<{ server: Http.Server; url: string; received: Array<Received> }>((resume) => {
      const received: Array<Received> = []
      const server = Http.createServer((req, res) => {
        let body = ""
        req.on("data", (c: Buffer) => (body += c.toString("utf8")))
        req.on("end", () => {
          const index = received.push({ headers: req.headers, body, at: Date.now() }) - 1
          if (!hang(index)) res.writeHead(200).end()
        })
      })
      server.listen(port, "127.0.0.1", () =>
        resume(Effect.succeed({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received })))
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** Kills the process with SIGKILL and waits until it is gone. */
const sigkill = (running: Running) =>
  Effect.callback<void>((resume) => {
    if (running.child.exitCode !== null || running.child.signalCode !== null) return resume(Effect.void)
    running.child.once("exit", () => resume(Effect.void))
    running.child.kill("SIGKILL")
  })

/** `statusgrid start` on the test's database and Redis, with its own data directory; killed when the scope closes. */
const startChild = (databaseUrl: string, extra: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const env = childEnv({
      ...extra,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      DATA_DIR: yield* tempDir("sigkill"),
      PORT: String(yield* Effect.promise(freePort)),
      SECRETS_KEY: secretsKey,
      NOTIFIER_LEASE_MS: String(leaseMs),
      NOTIFIER_POLL_MS: "100",
      // The test's receivers listen on 127.0.0.1, which the notifier refuses unless told otherwise.
      NOTIFIER_ALLOW_PRIVATE: "true"
    })
    return yield* Effect.acquireRelease(Effect.promise(() => startService(env)), sigkill)
  })

/** A new organization on the test's database (`statusgrid org create`) and its Admin API key. */
const createOrganization = (databaseUrl: string) =>
  Effect.gen(function*() {
    // The same secrets key as the servers': the key it prints is stored as a keyed hash under it.
    const env = childEnv({ DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, DATA_DIR: yield* tempDir("sigkill-org"), SECRETS_KEY: secretsKey })
    const created = yield* Effect.promise(() => runCli(["org", "create", "--name", "Acme", "--slug", "acme", "--plan", "pro"], env))
    assert.strictEqual(created.code, 0, created.stderr)
    const printed = JSON.parse(created.stdout.trim().split("\n").at(-1)!) as { organization: { id: string }; admin_api_key: string }
    return { id: printed.organization.id, key: printed.admin_api_key }
  })

/** One API request to a running child; the body parsed as JSON. */
const api = (running: Running, key: string, method: string, path: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${running.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    // Response bodies are read field by field in the tests, which assert each value they use.
    // oxlint-disable-next-line typescript/no-explicit-any
    return { status: response.status, body: (text === "" ? null : JSON.parse(text)) as any }
  })

/** Polls `check` every 50 ms until it gives a value; dies after `ms`. */

/** The redis client of this file, on an emptied database. */
const freshRedis = Effect.acquireRelease(
  Effect.promise(async () => {
    const redis = new Redis(redisUrl)
    await redis.flushdb()
    return redis
  }),
  (redis) => Effect.promise(() => redis.quit())
)

/** XINFO GROUPS of the event stream, by group name. */
const groupsOf = (redis: Redis) =>
  Effect.promise(async () => {
    const groups = (await redis.xinfo("GROUPS", "sg:events")) as Array<Array<string | number | null>>
    return Object.fromEntries(groups.map((fields) => {
      const info: Record<string, string | number | null> = {}
      for (let i = 0; i + 1 < fields.length; i += 2) info[String(fields[i])] = fields[i + 1]!
      return [String(info["name"]), info]
    }))
  })

interface DeliveryRow {
  readonly id: string
  readonly status: string
  readonly attempts: number
  readonly idempotency_key: string
}

/** The outbox rows, oldest first. */
const deliveries = Effect.gen(function*() {
  const sql = yield* SqlClient
  return yield* sql<DeliveryRow>`SELECT id, status, attempts, idempotency_key FROM deliveries ORDER BY created_at`
})

/** The recorded attempts of a delivery, oldest first, as [http_status, error]. */
const attemptsOf = (deliveryId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ http_status: number | null; error: string | null }>`
      SELECT http_status, error FROM delivery_attempts WHERE delivery_id = ${deliveryId}::uuid ORDER BY attempted_at, id`
    return rows.map((r) => [r.http_status, r.error] as const)
  })

/** The only outbox row once it is delivered (the rows and attempts seen last are in the error otherwise). */
const deliveredRow = Effect.gen(function*() {
  const sql = yield* SqlClient
  return yield* waitFor(20_000, "a delivered outbox row", deliveries.pipe(
    Effect.map((rows) => (rows.length === 1 && rows[0]!.status === "delivered" ? rows[0] : undefined))
  )).pipe(Effect.catchDefect((defect) =>
    Effect.gen(function*() {
      const seen = yield* sql`SELECT d.status, d.attempts, d.last_error, a.http_status, a.error
        FROM deliveries d LEFT JOIN delivery_attempts a ON a.delivery_id = d.id ORDER BY d.created_at, a.id`
      return yield* Effect.die(new Error(`${String(defect)}; seen: ${JSON.stringify(seen)}`))
    })
  ))
})

/** A test on its own database on the test server (dropped afterwards), with a SqlClient on it. */
/**
 * A source and component of the organization (SQL), shown in a stack, with a
 * webhook channel to `hookPort` and a rule on component.critical (API).
 */
const shopWithRule = (running: Running, org: { readonly id: string; readonly key: string }, hookPort: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [source] = yield* sql<{ id: string }>`
      INSERT INTO sources (organization_id, key, name, kind) VALUES (${org.id}::uuid, 'sigkill-shop', 'Sigkill Shop', 'manual')
      RETURNING id`
    const [component] = yield* sql<{ id: string }>`
      INSERT INTO components (source_id, external_id, name) VALUES (${source!.id}::uuid, 'checkout', 'Checkout') RETURNING id`
    const stack = yield* api(running, org.key, "POST", "/stacks", { name: "Shop" })
    assert.strictEqual(stack.status, 201)
    const item = yield* api(running, org.key, "POST", `/stacks/${stack.body.id}/items`, { kind: "component", component_id: component!.id })
    assert.strictEqual(item.status, 201)
    const channel = yield* api(running, org.key, "POST", "/channels", {
      type: "webhook",
      name: "Ops",
      settings: { url: `http://127.0.0.1:${hookPort}/hook` }
    })
    assert.strictEqual(channel.status, 201)
    const rule = yield* api(running, org.key, "POST", "/rules", { name: "Critical", triggers: ["component.critical"], channel_ids: [channel.body.id] })
    assert.strictEqual(rule.status, 201)
    return { component: component!, stack }
  })

/** What the poller writes when the shop's checkout goes critical; returns the entry id. */
const xaddCheckoutCritical = (redis: Redis) => {
  const event: StatusEvent = {
    id: "sigkill-shop:checkout:operational:critical",
    type: "component.status_changed",
    timestamp: new Date().toISOString(),
    source: { key: "sigkill-shop", name: "Sigkill Shop" },
    component: { id: "checkout", name: "Checkout", previous_status: "operational", current_status: "critical" }
  }
  return Effect.promise(() => redis.xadd("sg:events", "*", "id", event.id, "type", event.type, "payload", JSON.stringify(event)))
}

const onFreshDatabase = <A, E>(scenario: (databaseUrl: string) => Effect.Effect<A, E, SqlClient | Scope.Scope>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const databaseUrl = yield* freshDatabase
    return yield* scenario(databaseUrl).pipe(Effect.provide(Postgres.layerServer(databaseUrl, { maxConnections: 2 })))
  })))

describe("the notifier killed with SIGKILL", () => {
  it("mid-delivery: the next process sends the claimed delivery again after the lease, with the same idempotency key", () =>
    onFreshDatabase((databaseUrl) =>
      Effect.gen(function*() {
        yield* freshRedis
        const org = yield* createOrganization(databaseUrl)
        // The first request is never answered: its sender is in the middle of the attempt when it dies.
        const hook = yield* receiver(0, (index) => index === 0)
        const first = yield* startChild(databaseUrl)
        const channel = yield* api(first, org.key, "POST", "/channels", { type: "webhook", name: "Ops", settings: { url: hook.url } })
        assert.strictEqual(channel.status, 201)
        const sent = yield* api(first, org.key, "POST", `/channels/${channel.body.id}/test`)
        assert.strictEqual(sent.status, 202)

        yield* waitFor(15_000, "the first request", Effect.sync(() => (hook.received.length > 0 ? true : undefined)))
        yield* sigkill(first)
        // Claimed under its lease and counted, with no outcome: the process died waiting for the answer.
        const [claimed] = yield* deliveries
        assert.deepStrictEqual([claimed!.id, claimed!.status, claimed!.attempts], [sent.body.id, "sending", 1])
        assert.deepStrictEqual(yield* attemptsOf(claimed!.id), [])

        const second = yield* startChild(databaseUrl)
        const delivered = yield* deliveredRow
        assert.strictEqual(hook.received.length, 2)
        const [killed, resent] = hook.received
        for (const request of [killed!, resent!]) {
          assert.strictEqual(request.headers["webhook-id"], claimed!.idempotency_key)
          assert.strictEqual(request.headers["idempotency-key"], claimed!.idempotency_key)
        }
        // The same notification, byte for byte; only the attempt's timestamp is new.
        assert.strictEqual(resent!.body, killed!.body)
        assert.strictEqual(JSON.parse(resent!.body).event, "test")
        assert.strictEqual(resent!.headers["x-service-signature"], killed!.headers["x-service-signature"])
        assert.isAbove(Number(resent!.headers["webhook-timestamp"]), Number(killed!.headers["webhook-timestamp"]))
        // Not resent before the dead sender's lease ran out (its claim came just before the first request).
        assert.isAtLeast(resent!.at - killed!.at, leaseMs - 500)
        // Two claims, one recorded outcome: the killed attempt left no attempt row.
        assert.deepStrictEqual([delivered.id, delivered.attempts], [claimed!.id, 2])
        assert.deepStrictEqual(yield* attemptsOf(claimed!.id), [[200, null]])
        const center = yield* api(second, org.key, "GET", "/deliveries")
        assert.strictEqual(center.status, 200)
        assert.deepStrictEqual(
          center.body.data.map((d: { id: string; status: string; attempts: number }) => [d.id, d.status, d.attempts]),
          [[claimed!.id, "delivered", 2]]
        )
        assert.strictEqual(yield* Effect.promise(second.stop), 0)
        assert.strictEqual(hook.received.length, 2)
      })), 60_000)

  it("events while it is down: the next process reads them from the group's position, and a kill right after reading loses and repeats nothing", () =>
    onFreshDatabase((databaseUrl) =>
      Effect.gen(function*() {
        const redis = yield* freshRedis
        const org = yield* createOrganization(databaseUrl)
        // The receiver's port, where nothing listens until the last process runs.
        const hookPort = yield* Effect.promise(freePort)
        const first = yield* startChild(databaseUrl)
        // The group is made at the first start, at the end of the (empty) stream.
        assert.strictEqual((yield* groupsOf(redis))["notifier"]?.["last-delivered-id"], "0-0")

        const { component, stack } = yield* shopWithRule(first, org, hookPort)
        yield* sigkill(first)

        // What the poller writes for the change, while no notifier runs.
        const entryId = yield* xaddCheckoutCritical(redis)

        // The next process reads the entry; it is killed as soon as the entry is acknowledged (its
        // outbox row written), before it can deliver: the receiver is not listening yet.
        const second = yield* startChild(databaseUrl)
        yield* waitFor(15_000, "the entry read and acknowledged", groupsOf(redis).pipe(Effect.map((groups) => {
          const notifier = groups["notifier"]
          return notifier?.["last-delivered-id"] === entryId && notifier["pending"] === 0 ? true : undefined
        })))
        yield* sigkill(second)
        const read = yield* deliveries
        assert.strictEqual(read.length, 1, "the entry written while no notifier ran is one outbox row once read")
        const [written] = read
        assert.notStrictEqual(written!.status, "delivered")

        const hook = yield* receiver(hookPort)
        const third = yield* startChild(databaseUrl)
        const delivered = yield* deliveredRow
        assert.strictEqual(delivered.id, written!.id)
        assert.deepStrictEqual((yield* attemptsOf(delivered.id)).filter(([status]) => status === 200), [[200, null]])
        assert.strictEqual(yield* Effect.promise(third.stop), 0)

        assert.strictEqual(hook.received.length, 1)
        const [request] = hook.received
        assert.strictEqual(request!.headers["webhook-id"], delivered.idempotency_key)
        assert.strictEqual(request!.headers["idempotency-key"], delivered.idempotency_key)
        const sent = JSON.parse(request!.body)
        assert.strictEqual(sent.event, "component.status_changed")
        assert.deepStrictEqual(
          [sent.stack.id, sent.component.id, sent.component.previous_status, sent.component.current_status],
          [stack.body.id, component!.id, "operational", "critical"]
        )
        // Nothing left unacknowledged, and no entry read twice into a second outbox row.
        const notifier = (yield* groupsOf(redis))["notifier"]
        assert.deepStrictEqual([notifier?.["last-delivered-id"], notifier?.["pending"]], [entryId, 0])
        assert.strictEqual((yield* deliveries).length, 1)
      })), 60_000)

  it("an entry a process read but never acknowledged (it died) is taken over by another process", () =>
    onFreshDatabase((databaseUrl) =>
      Effect.gen(function*() {
        const redis = yield* freshRedis
        const org = yield* createOrganization(databaseUrl)
        const hook = yield* receiver(0)
        const first = yield* startChild(databaseUrl)
        yield* shopWithRule(first, org, Number(new URL(hook.url).port))
        yield* sigkill(first)
        const entryId = yield* xaddCheckoutCritical(redis)
        // A runner read the entry as its own consumer and died before acknowledging it.
        const read: unknown = yield* Effect.promise(() =>
          redis.xreadgroup("GROUP", "notifier", "notifier-dead-runner", "COUNT", "10", "STREAMS", "sg:events", ">"))
        assert.include(JSON.stringify(read), String(entryId))

        const second = yield* startChild(databaseUrl, { NOTIFIER_CLAIM_IDLE_MS: "1000" })
        const delivered = yield* deliveredRow
        assert.strictEqual(hook.received.length, 1)
        assert.strictEqual(hook.received[0]!.headers["webhook-id"], delivered.idempotency_key)
        assert.strictEqual(yield* Effect.promise(second.stop), 0)
        const notifier = (yield* groupsOf(redis))["notifier"]
        assert.strictEqual(notifier?.["pending"], 0)
        assert.strictEqual((yield* deliveries).length, 1)
      })), 60_000)
})
