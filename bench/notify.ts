import { Effect, Layer } from "effect"
import { delayMs, eventLoopDelay } from "../services/platform/EventLoopDelay.ts"
import { SqlClient } from "effect/sql/SqlClient"
import { createHmac, randomBytes, randomUUID } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { splitSecrets } from "../services/domain/Channel.ts"
import type { StatusEvent } from "../services/domain/Event.ts"
import * as Consumer from "../services/notifier/Consumer.ts"
import * as Deliverer from "../services/notifier/Deliverer.ts"
import { Bus } from "../services/platform/Bus.ts"
import { writeEvent } from "../services/platform/EventStream.ts"
import * as Migrations from "../services/platform/Migrations.ts"
import { SecretBox, secretBinding } from "../services/platform/SecretBox.ts"
import { peakRssMb, percentile, round } from "./figures.ts"

export interface NotifyBenchOptions {
  readonly sources: number
  /** components of each source */
  readonly components: number
  /** events published per second */
  readonly rate: number
  /** seconds of publishing */
  readonly durationS: number
  /** seconds of publishing at the rate before measuring (delivered in full first) */
  readonly warmupS: number
  /** seconds to wait for the last deliveries once publishing ends */
  readonly waitS: number
}

/** What the webhook receiver got: the first receipt time of each event id of this run, and what was odd. */
export interface Receipts {
  readonly url: string
  readonly firstAt: Map<string, number>
  readonly odd: { duplicates: number; badSignatures: number }
}


/**
 * A webhook receiver on 127.0.0.1 in this process (keep-alive): takes the event
 * id from the `webhook-id` header (`<event id>:<channel id>`), notes when it
 * first arrived, checks X-Service-Signature, and answers 200.
 */
export const receiver = (signingSecret: string, runPrefix: string) =>
  Effect.acquireRelease(
    Effect.callback<Receipts & { readonly server: Http.Server }>((resume) => {
      const firstAt = new Map<string, number>()
      const odd = { duplicates: 0, badSignatures: 0 }
      const server = Http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const at = performance.now()
          const key = String(req.headers["webhook-id"] ?? "")
          const eventId = key.slice(0, key.lastIndexOf(":"))
          const body = Buffer.concat(chunks)
          if (createHmac("sha256", signingSecret).update(body).digest("hex") !== req.headers["x-service-signature"]) odd.badSignatures++
          // Deliveries an interrupted earlier run left in a shared outbox are not this run's.
          if (eventId.startsWith(runPrefix)) {
            if (firstAt.has(eventId)) odd.duplicates++
            else firstAt.set(eventId, at)
          }
          res.writeHead(200).end()
        })
      })
      server.keepAliveTimeout = 60_000
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, firstAt, odd, server })))
    }),
    ({ server }) => Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )

interface Target {
  readonly source_key: string
  readonly source_name: string
  readonly external_id: string
  readonly name: string
}

/** The rule triggers of `insertFlipRule`: a component going critical (or down), and back to operational. */
export const flipTriggers: ReadonlyArray<string> = ["component.critical", "component.recovered"]

/**
 * A webhook channel of the organization to `hookUrl` (secrets sealed as the API seals them) and one
 * active rule on `flipTriggers` with no cooldown sending to it, so that every flip alerts.
 */
export const insertFlipRule = Effect.fn("bench.insertFlipRule")(function*(orgId: string, hookUrl: string, signingSecret: string) {
  const sql = yield* SqlClient
  const box = yield* SecretBox
  const { view, secrets } = splitSecrets("webhook", { url: hookUrl, method: "POST", headers: {}, signing_secret: signingSecret })
  const channelId = randomUUID()
  const sealed = box.seal(JSON.stringify(secrets), secretBinding("channel secrets", orgId, channelId))
  const [channel] = yield* sql<{ id: string }>`
    INSERT INTO channels (id, organization_id, type, name, settings, secrets)
    VALUES (${channelId}::uuid, ${orgId}::uuid, 'webhook', 'Bench receiver', ${JSON.stringify(view)}::jsonb, ${sealed}::bytea)
    RETURNING id`
  const [rule] = yield* sql<{ id: string }>`
    INSERT INTO notification_rules (organization_id, name, triggers, cooldown_s)
    VALUES (${orgId}::uuid, 'Every flip', ${flipTriggers}::text[], 0)
    RETURNING id`
  yield* sql`INSERT INTO rule_channels (rule_id, channel_id) VALUES (${rule!.id}::uuid, ${channel!.id}::uuid)`
})

/**
 * One enterprise organization with S sources of C components (custom sources of
 * the organization, so nothing is added to the shared catalog), one stack showing
 * every component, one webhook channel to the receiver (secrets sealed as the API
 * seals them), and one active rule on component.critical and component.recovered
 * with no cooldown, so every flip alerts. Removed (with its outbox) when the scope closes.
 */
const insertOrganization = Effect.fn("bench.notify.insert")(function*(options: NotifyBenchOptions, run: string, hookUrl: string, signingSecret: string) {
  const sql = yield* SqlClient
  const [org] = yield* Effect.acquireRelease(
    sql<{ id: string }>`
      INSERT INTO organizations (slug, name, plan_id) VALUES (${`bench-notify-${run}`}, 'Notify benchmark', 'enterprise')
      RETURNING id`,
    ([created]) => sql`DELETE FROM organizations WHERE id = ${created!.id}::uuid`.pipe(Effect.orDie)
  )
  const orgId = org!.id
  yield* sql`
    INSERT INTO sources (organization_id, key, name, kind)
    SELECT ${orgId}::uuid, ${`bench-notify-${run}-`} || i, 'Bench source ' || i, 'manual'
    FROM generate_series(0, ${options.sources - 1}::int) AS i`
  yield* sql`
    INSERT INTO components (source_id, external_id, name, position)
    SELECT s.id, 'c' || j, 'Component ' || j, j
    FROM sources s, generate_series(0, ${options.components - 1}::int) AS j
    WHERE s.organization_id = ${orgId}::uuid`
  const [stack] = yield* sql<{ id: string }>`
    INSERT INTO stacks (organization_id, name, slug) VALUES (${orgId}::uuid, 'Everything', 'everything') RETURNING id`
  yield* sql`
    INSERT INTO stack_items (stack_id, kind, component_id, position)
    SELECT ${stack!.id}::uuid, 'component', c.id, row_number() OVER (ORDER BY s.key, c.position)
    FROM components c JOIN sources s ON s.id = c.source_id
    WHERE s.organization_id = ${orgId}::uuid`
  yield* insertFlipRule(orgId, hookUrl, signingSecret)
  const targets = yield* sql<Target>`
    SELECT s.key AS source_key, s.name AS source_name, c.external_id, c.name
    FROM components c JOIN sources s ON s.id = c.source_id
    WHERE s.organization_id = ${orgId}::uuid ORDER BY s.key, c.position`
  return { orgId, targets }
})

/**
 * `statusgrid bench notify`: the notifier of this process (event-stream consumer
 * and outbox delivery worker) on the configured stores, fed component flips
 * on `sg:events` at a fixed rate, delivering to a local webhook receiver.
 * Measures deliveries against events, sustained events/s, and the latency
 * from publishing an event to its webhook's arrival.
 */
export const runNotifyBench = Effect.fn("bench.notify")(function*(options: NotifyBenchOptions) {
  const run = Date.now().toString(36)
  const signingSecret = randomBytes(32).toString("hex")
  const hook = yield* receiver(signingSecret, `bench-${run}-`)
  yield* Migrations.migratePostgres()
  const { orgId, targets } = yield* insertOrganization(options, run, hook.url, signingSecret).pipe(Effect.provide(SecretBox.layer))
  // The notifier starts once the organization exists.
  return yield* measure(options, run, hook, orgId, targets).pipe(Effect.provide(notifierLayer))
}, Effect.scoped) // the receiver and the organization go before the stores close

const measure = Effect.fn("bench.notify.measure")(function*(
  options: NotifyBenchOptions,
  run: string,
  hook: Receipts,
  orgId: string,
  targets: ReadonlyArray<Target>
) {
  const bus = yield* Bus
  const sql = yield* SqlClient
  const loopDelay = eventLoopDelay()
  const statuses = targets.map(() => "operational")
  const publishedAt = new Map<string, number>()
  const total = Math.round(options.rate * options.durationS)

  /** Flips component n mod the count, operational <-> critical, with the id `bench-<run>-<label>`. */
  const publish = (n: number, label: string) => {
    const i = n % targets.length
    const target = targets[i]!
    const previous = statuses[i]!
    const current = previous === "operational" ? "critical" : "operational"
    statuses[i] = current
    const event: StatusEvent = {
      id: `bench-${run}-${label}`,
      type: "component.status_changed",
      timestamp: new Date().toISOString(),
      source: { key: target.source_key, name: target.source_name },
      component: { id: target.external_id, name: target.name, previous_status: previous, current_status: current }
    }
    publishedAt.set(event.id, performance.now())
    return writeEvent(bus, event)
  }

  /** `count` events at `options.rate`, paced against the clock: every few milliseconds, the events due by then. */
  const paced = Effect.fnUntraced(function*(count: number, label: (n: number) => string) {
    const from = performance.now()
    let published = 0
    while (published < count) {
      const due = Math.min(count, Math.floor(((performance.now() - from) / 1000) * options.rate) + 1)
      for (; published < due; published++) yield* publish(published, label(published))
      yield* Effect.sleep("5 millis")
    }
  })

  /** Waits until `count` events of this run arrived in all, or `until` (performance.now()) passed; how many arrived. */
  const arrivals = Effect.fnUntraced(function*(count: number, until: number) {
    while (hook.firstAt.size < count && performance.now() < until) yield* Effect.sleep("50 millis")
    return hook.firstAt.size
  })

  // A warm-up at the rate, delivered in full before measuring: the pools are connected, statements
  // prepared and code compiled, and entries an interrupted earlier run left unread on the stream are
  // behind us (the group reads in order).
  const warmupFrom = performance.now()
  const warmupIds = Array.from({ length: Math.max(1, Math.round(options.rate * options.warmupS)) }, (_, n) => `w${n}`)
  yield* paced(warmupIds.length, (n) => warmupIds[n]!)
  const warmedUp = yield* arrivals(warmupIds.length, performance.now() + options.waitS * 1000)
  if (warmedUp < warmupIds.length) {
    return yield* Effect.die(new Error(
      `${warmedUp} of ${warmupIds.length} warm-up events delivered within ${options.waitS} s (see the notifier's warnings on stderr)`
    ))
  }
  const warmupS = (performance.now() - warmupFrom) / 1000

  loopDelay.enable()
  const cpuStart = process.cpuUsage()
  const started = performance.now()
  const ids = Array.from({ length: total }, (_, n) => `bench-${run}-${n}`)
  yield* paced(total, String)
  const publishedIn = performance.now() - started
  yield* arrivals(warmupIds.length + total, performance.now() + options.waitS * 1000)
  const cpu = process.cpuUsage(cpuStart)
  loopDelay.disable()

  const latencies: Array<number> = []
  let lastReceipt = started
  for (const id of ids) {
    const at = hook.firstAt.get(id)
    if (at === undefined) continue
    latencies.push(at - publishedAt.get(id)!)
    lastReceipt = Math.max(lastReceipt, at)
  }
  latencies.sort((a, b) => a - b)
  const received = latencies.length
  const outbox = yield* sql<{ status: string; n: number }>`
    SELECT status, count(*)::int AS n FROM deliveries WHERE organization_id = ${orgId}::uuid GROUP BY status ORDER BY status`
  const errors = yield* sql<{ last_error: string; n: number }>`
    SELECT last_error, count(*)::int AS n FROM deliveries
    WHERE organization_id = ${orgId}::uuid AND last_error IS NOT NULL GROUP BY last_error ORDER BY n DESC LIMIT 3`
  return {
    bench: "notify",
    sources: options.sources,
    components: targets.length,
    rate: options.rate,
    duration_s: options.durationS,
    warmup_events: warmupIds.length,
    warmup_s: round(warmupS),
    events_published: total,
    publish_rate: round(total / (publishedIn / 1000)),
    deliveries_received: received,
    all_delivered: received === total,
    missing: total - received,
    ...(received === total ? {} : { missing_note: `${total - received} of ${total} events not delivered within ${options.waitS} s after publishing ended` }),
    duplicates: hook.odd.duplicates,
    bad_signatures: hook.odd.badSignatures,
    events_per_s: received === 0 ? 0 : round(received / ((lastReceipt - started) / 1000)),
    span_s: round((lastReceipt - started) / 1000),
    latency_ms: {
      p50: round(percentile(latencies, 50)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? 0)
    },
    outbox: Object.fromEntries(outbox.map((r) => [r.status, r.n])),
    ...(errors.length === 0 ? {} : { outbox_errors: Object.fromEntries(errors.map((r) => [r.last_error, r.n])) }),
    cpu_s: round((cpu.user + cpu.system) / 1e6),
    event_loop_delay_ms: delayMs(loopDelay),
    // The whole run's peak: every embedded store lives in this process.
    peak_rss_mb: peakRssMb()
  }
})




/** The notifier of a serving process: the event-stream consumer and the outbox delivery worker. */
const notifierLayer = Layer.mergeAll(Consumer.layer, Deliverer.serviceLayer)
