import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { crowdDefaults } from "../../services/domain/CrowdScore.ts"
import { call, newTenant } from "../support/api.ts"
import { awayFromBoundary, confidenceOf, report } from "../support/crowd.ts"
import { arrivals, at, bodies, newRule, notifierLayer, sleep, webhookChannel } from "../support/notifierHarness.ts"

/**
 * The `crowd.signal` rule trigger end to end (issue #17, decision 0015): reports through the API from
 * real loopback addresses start a source's crowd signal, its events go on the event stream, and the
 * notifier's rules deliver them to webhooks, each rule once its minimum confidence is reached.
 */

const TestLayer = notifierLayer({ name: "crowd-rules" })

describe("crowd signal rules", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("reports → signal → event stream → rules → webhooks", (it) => {
    it.effect("a rule with the crowd.signal trigger delivers when the signal starts, one with a higher minimum when the signal reaches it, once each", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const sourceKey = `crowd-${tenant.slug}`
        const [source] = yield* sql<{ id: string }>`
          INSERT INTO sources (key, name, kind, status, provider_type, status_page_url, check_class, poll_interval_s)
          VALUES (${sourceKey}, 'Birch Mail', 'catalog', 'operational', 'statuspage_io', 'https://status.invalid', 'standard', 300) RETURNING id`
        const [component] = yield* sql<{ id: string }>`
          INSERT INTO components (source_id, external_id, name, status) VALUES (${source!.id}::uuid, 'smtp', 'SMTP', 'operational') RETURNING id`
        const stack = (yield* call("POST", "/stacks", { key, body: { name: "Mail" } })).body as { id: string }
        // The stack shows one component of the source: the signal (about the whole source) is placed through it.
        assert.strictEqual((yield* call("POST", `/stacks/${stack.id}/items`, { key, body: { kind: "component", component_id: component!.id } })).status, 201)

        const every = yield* webhookChannel(key, "/crowd/70")
        const high = yield* webhookChannel(key, "/crowd/90")
        const other = yield* webhookChannel(key, "/crowd/other")
        yield* newRule(key, { name: "users report", triggers: ["crowd.signal"], channel_ids: [every] })
        const highRule = yield* newRule(key, { name: "users report a lot", triggers: ["crowd.signal"], crowd_min_confidence: 90, channel_ids: [high] })
        yield* newRule(key, { name: "official only", triggers: ["component.critical", "incident.created"], channel_ids: [other] })
        assert.strictEqual((yield* call("GET", `/rules/${highRule}`, { key })).body.crowd_min_confidence, 90)
        const low = yield* call("POST", "/rules", { key, body: { name: "too low", triggers: ["crowd.signal"], crowd_min_confidence: 50, channel_ids: [every] } })
        assert.deepStrictEqual([low.status, low.body.field], [400, "crowd_min_confidence"])

        yield* awayFromBoundary(crowdDefaults.windowMs, 60)
        const reportFrom = (n: number) =>
          report(sourceKey, `127.0.${100 + n}.1`, { symptom: "down" }).pipe(Effect.tap((r) => Effect.sync(() => assert.strictEqual(r.status, 202, JSON.stringify(r.body)))))
        // Until the start threshold nothing is sent.
        const startsAt = Array.from({ length: 20 }, (_, i) => i + 1).find((n) => confidenceOf(n) >= crowdDefaults.startAt)!
        for (let n = 1; n < startsAt; n++) yield* reportFrom(n)
        yield* sleep(500)
        assert.strictEqual((yield* at("/crowd/70")).length, 0)
        // The start: the rule at 70 % hears of it.
        const started = yield* reportFrom(startsAt)
        const first = bodies(yield* arrivals("/crowd/70", 1))
        assert.strictEqual(first.length, 1)
        assert.include(first[0], { event: "crowd.signal_started" })
        assert.deepStrictEqual(first[0]!["stack"], { id: stack.id, name: "Mail", slug: "mail" })
        assert.include(first[0]!["crowd"] as object, {
          signal_id: started.body.score.signal.id,
          confidence: confidenceOf(startsAt),
          reason: started.body.score.reason,
          official_status: "operational"
        })
        assert.include(first[0]!["component"] as object, { id: sourceKey, name: "Birch Mail", current_status: "users_report_problems" })
        assert.strictEqual((yield* at("/crowd/90")).length, 0, `${confidenceOf(startsAt)} % is below the second rule's 90`)

        // More reporters: the signal reaches 90 %; the second rule hears of it, the first not again.
        let n = startsAt
        while (confidenceOf(n) < 90) yield* reportFrom(++n)
        const rose = bodies(yield* arrivals("/crowd/90", 1))
        assert.strictEqual(rose.length, 1)
        assert.include(rose[0], { event: "crowd.signal_rose" })
        assert.include(rose[0]!["crowd"] as object, { confidence: confidenceOf(n), peak_confidence: confidenceOf(n) })
        // Up to 100 %: no rule hears of it again; the official-only rule never did.
        while (confidenceOf(n) < 100) yield* reportFrom(++n)
        yield* sleep(1000)
        assert.strictEqual((yield* at("/crowd/70")).length, 1)
        assert.strictEqual((yield* at("/crowd/90")).length, 1)
        assert.strictEqual((yield* at("/crowd/other")).length, 0)
      }), 180_000)
  })
})
