import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { crowdReportsLayer } from "../../services/api/Crowd/http.ts"
import * as CrowdWorker from "../../services/crowd/CrowdWorker.ts"
import { crowdRecord, recordSentence } from "../../services/domain/CrowdRecord.ts"
import { crowdDefaults } from "../../services/domain/CrowdScore.ts"
import type { StreamEvent } from "../../services/domain/Event.ts"
import { Bus } from "../../services/platform/Bus.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { crowdAddress, crowdArrivals, crowdSource } from "../../services/simulator/Crowd.ts"
import { call, newTenant } from "../support/api.ts"
import { awayFromBoundary, report, send } from "../support/crowd.ts"
import { eventually } from "../support/eventually.ts"
import { api, engine, notifier, Sim, simulatedStatuspage, simulator } from "../support/engine.ts"

/**
 * Issue #17's acceptance, end to end in one process: the simulated crowd of one source reports through
 * the API (each reporter from its own loopback address), its score rises, `crowd.signal_started` is
 * written once, a rule with the `crowd.signal` trigger delivers to a webhook; then the simulator flips
 * the source's official status, the poller writes the change on the event stream, the crowd's worker
 * records the official onset led by the signal, and the API's record equals what this test computes
 * from the signal's start and the onset's event.
 */

class Hook extends Context.Service<Hook, { url: string; received: Array<Record<string, unknown>> }>()("test/crowd-e2e/Hook") {}

const hook = Layer.effect(Hook, Effect.acquireRelease(
  Effect.callback<{ url: string; received: Array<Record<string, unknown>>; server: Http.Server }>((resume) => {
    const received: Array<Record<string, unknown>> = []
    const server = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString("utf8")))
      req.on("end", () => {
        received.push(JSON.parse(body) as Record<string, unknown>)
        res.writeHead(200).end()
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server })))
  }),
  ({ server }) => Effect.callback<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
))

const config = { NOTIFIER_POLL_MS: "50", NOTIFIER_ALLOW_PRIVATE: "true", SECRETS_KEY: randomBytes(32).toString("base64") }
const TestLayer = engine(
  { name: "crowd-e2e", config },
  Layer.mergeAll(notifier, api, simulator, hook, CrowdWorker.layer.pipe(Layer.provide(crowdReportsLayer)))
)

describe("crowd detection end to end", () => {
  layer(TestLayer, { timeout: 120_000, excludeTestServices: true })("simulated crowd → API → signal → rule → webhook; simulator flip → poller → onset → record", (it) => {
    it.effect("the score rises with the simulated crowd, the signal starts once and reaches a webhook, the official flip afterwards records the lead time", () =>
      Effect.gen(function*() {
        const sim = yield* Sim
        const bus = yield* Bus
        const receiver = yield* Hook
        const { page, target, componentId } = yield* simulatedStatuspage("crowd-flip", "Crowd Flip", 3)
        const tenant = yield* newTenant("pro")
        const key = tenant.keys.admin
        const stack = yield* call("POST", "/stacks", { key, body: { name: "Checkout" } })
        assert.strictEqual((yield* call("POST", `/stacks/${stack.body.id}/items`, { key, body: { kind: "component", component_id: componentId } })).status, 201)
        const channel = yield* call("POST", "/channels", { key, body: { type: "webhook", name: "Ops", settings: { url: receiver.url } } })
        assert.strictEqual((yield* call("POST", "/rules", { key, body: { name: "Users report", triggers: ["crowd.signal"], channel_ids: [channel.body.id] } })).status, 201)
        yield* bus.xgroupCreate(RedisKeys.events, "crowd-e2e-test", "$")

        // The simulated crowd's reports of an outage (5 minutes ahead of the flip, a strong ramp), in order,
        // played at once: each from its reporter's own address.
        const crowd = crowdSource(page.key)
        const flipAt = Date.now() + 5 * 60_000
        const outage = { at: flipAt, durationMs: 30 * 60_000, leadMs: 5 * 60_000, rampMs: 0, peakPer10Min: 60 }
        const reports = crowdArrivals(crowd, flipAt - outage.leadMs, flipAt, [outage]).slice(0, 40)
        yield* awayFromBoundary(crowdDefaults.windowMs, 60)
        const confidences: Array<number> = []
        let signal: { id: string; started_at: string } | null = null
        for (const r of reports) {
          const answer = yield* report(page.key, crowdAddress(r), { symptom: r.symptom ?? "down" })
          assert.strictEqual(answer.status, 202, JSON.stringify(answer.body))
          confidences.push(answer.body.score.confidence)
          signal ??= answer.body.score.signal
        }
        // The score rises as distinct reporters arrive (a reporter again in the window counts once).
        assert.deepStrictEqual(confidences, confidences.toSorted((a, b) => a - b))
        assert.isAtLeast(confidences.at(-1)!, crowdDefaults.startAt)
        assert.isNotNull(signal)

        // crowd.signal_started once on the stream, and one delivery of the rule.
        const delivered = yield* eventually(15_000, Effect.sync(() => (receiver.received.length > 0 ? receiver.received : undefined)))
        yield* Effect.sleep("1 second")
        assert.strictEqual(delivered.length, 1)
        assert.strictEqual(delivered[0]!["event"], "crowd.signal_started")
        assert.strictEqual((delivered[0]!["crowd"] as { signal_id: string }).signal_id, signal!.id)

        // The status page follows: the simulator opens an incident; the poller writes the change.
        sim.state.openIncident(page.key, { title: "Checkout down", impact: "critical", components: [target.id], component_status: "critical" })
        const seen: Array<StreamEvent> = []
        const onsetEvent = yield* eventually(20_000, bus.xreadgroup(RedisKeys.events, "crowd-e2e-test", "t", { count: 1000, blockMs: 0 }).pipe(
          Effect.map((entries) => {
            seen.push(...entries.map((e) => JSON.parse(e.fields["payload"]!) as StreamEvent))
            return seen.find((e) => CrowdWorker.onsetOf(e) !== undefined && "source" in e && e.source.key === page.key)
          })
        ))
        // The signal was written on the stream once, before the official change.
        const starts = seen.filter((e) => e.type === "crowd.signal_started" && "source" in e && e.source.key === page.key)
        assert.strictEqual(starts.length, 1)
        assert.isBelow(seen.indexOf(starts[0]!), seen.indexOf(onsetEvent))
        const onsetAt = Date.parse(onsetEvent.timestamp)
        const startedAt = Date.parse(signal!.started_at)
        assert.isAbove(onsetAt, startedAt)
        const expected = crowdRecord([{ id: signal!.id, startedAt, officialStatus: "operational" }], [{ at: onsetAt, signalId: signal!.id }], Date.now())
        const record = yield* eventually(15_000, send("GET", `/sources/${page.key}/crowd/record`, "127.0.0.1").pipe(
          Effect.map((r) => (r.body.onsets === 1 ? r : undefined))
        ))
        assert.deepStrictEqual(record.body, { key: page.key, ...expected, sentence: recordSentence("Crowd Flip", expected) })
        assert.deepStrictEqual([record.body.led, record.body.led_percent, record.body.false_alarms], [1, 100, 0])
      }), 180_000)
  })
})
