import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import { crowdReportsLayer } from "../../services/api/Crowd/http.ts"
import { CrowdReports } from "../../services/crowd/CrowdReports.ts"
import { CrowdSignals } from "../../services/crowd/CrowdSignals.ts"
import * as CrowdWorker from "../../services/crowd/CrowdWorker.ts"
import { crowdRecord, followMs, recordSentence } from "../../services/domain/CrowdRecord.ts"
import { crowdDefaults } from "../../services/domain/CrowdScore.ts"
import type { CrowdEvent, StatusEvent } from "../../services/domain/Event.ts"
import { Bus } from "../../services/platform/Bus.ts"
import { RedisKeys } from "../../services/platform/RedisKeys.ts"
import { writeEvent } from "../../services/platform/EventStream.ts"
import { apiServer } from "../support/api.ts"
import { awayFromBoundary, confidenceOf, report, send } from "../support/crowd.ts"
import { eventually } from "../support/eventually.ts"
import { catalogSource } from "../support/orgRecords.ts"
import { withConfig } from "../support/stores.ts"

/**
 * The crowd's signal and its record against the official status (issue #17, decision 0015), through
 * the API on PostgreSQL and the bus: reports from real loopback addresses start a signal once, it is
 * announced on sg:events and in sg:crowd:signals, an official onset read from the event stream by the
 * crowd's worker records the lead time, the sweep ends the signal as its reports age, and the API's
 * record equals what this test computes from the facts it made.
 */

const secretsKey = randomBytes(32).toString("base64")
const services = crowdReportsLayer.pipe(Layer.provide(withConfig({ SECRETS_KEY: secretsKey })))

/** The crowd events of the stream entries a consumer group reads from its creation on. */
const crowdEventsOf = (group: string) =>
  Effect.gen(function*() {
    const bus = yield* Bus
    const entries = yield* bus.xreadgroup(RedisKeys.events, group, "test", { count: 10_000, blockMs: 0 })
    return entries.flatMap((e) => (e.fields["type"]?.startsWith("crowd.") === true ? [JSON.parse(e.fields["payload"]!) as CrowdEvent] : []))
  })

/** A status change of `key` as the Publisher writes it on sg:events. */
const statusChanged = (key: string, name: string, at: number, previous: string, current: string): StatusEvent => ({
  id: `test-${randomBytes(6).toString("hex")}`,
  type: "source.status_changed",
  timestamp: new Date(at).toISOString(),
  source: { key, name },
  previous_status: previous,
  current_status: current
})

/** A source's record at `ms`, from the service the API calls. */
const recordAt = (ms: number, key: string) => CrowdReports.use((r) => r.record(key, ms)).pipe(Effect.provide(services))

const publish = (event: StatusEvent) =>
  Bus.use((bus) => writeEvent(bus, event))

describe("crowd signals", () => {
  layer(apiServer({ SECRETS_KEY: secretsKey }), { timeout: 180_000, excludeTestServices: true })("through the API on PostgreSQL", (it) => {
    it.effect("a signal starts once above the threshold and is announced; an official onset after it records the lead time; the sweep ends it; the record matches", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const bus = yield* Bus
        const source = yield* catalogSource(1)
        const name = `Catalog ${source.key}`
        const group = `test-${randomBytes(4).toString("hex")}`
        yield* bus.xgroupCreate(RedisKeys.events, group, "$")
        // The crowd's worker as a serving process runs it: reads official onsets from the stream.
        yield* Layer.build(CrowdWorker.layer.pipe(Layer.provide(services), Layer.provide(withConfig({ SECRETS_KEY: secretsKey }))))
        yield* awayFromBoundary(crowdDefaults.windowMs, 60)

        // Reporters from as many networks: no signal until the model's threshold (with 3 counted at least).
        const startsAt = Array.from({ length: 20 }, (_, i) => i + 1).find((n) => confidenceOf(n) >= crowdDefaults.startAt && n >= crowdDefaults.minReporters)!
        for (let n = 1; n < startsAt; n++) {
          const r = yield* report(source.key, `127.0.${40 + n}.1`, { symptom: "down" })
          assert.strictEqual(r.status, 202, JSON.stringify(r.body))
          assert.isNull(r.body.score.signal, `no signal at ${n} reporters (${r.body.score.confidence} %)`)
        }
        const crossing = yield* report(source.key, `127.0.${40 + startsAt}.1`, { symptom: "down" })
        assert.strictEqual(crossing.body.score.confidence, confidenceOf(startsAt))
        const signal = crossing.body.score.signal
        assert.isNotNull(signal)
        assert.include(signal, { start_confidence: confidenceOf(startsAt), peak_confidence: confidenceOf(startsAt), reason: crossing.body.score.reason })
        // More reporters raise its peak; no second signal starts.
        const more = yield* report(source.key, `127.0.${41 + startsAt}.1`, { symptom: "down" })
        assert.strictEqual(more.body.score.signal.id, signal.id)
        assert.strictEqual(more.body.score.signal.peak_confidence, confidenceOf(startsAt + 1))
        const [rows] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM crowd_signals WHERE source_id = ${source.id}`
        assert.strictEqual(rows!.n, 1)

        // Announced once on sg:events, and its state in Redis; the peak's rise into another tenth is announced too.
        const started = (yield* crowdEventsOf(group)).filter((e) => e.source.key === source.key)
        const rises = Math.floor(confidenceOf(startsAt + 1) / 10) > Math.floor(confidenceOf(startsAt) / 10)
          ? [["crowd.signal_rose", signal.id, confidenceOf(startsAt + 1)]]
          : []
        assert.deepStrictEqual(started.map((e) => [e.type, e.crowd.signal_id, e.crowd.confidence]), [["crowd.signal_started", signal.id, confidenceOf(startsAt)], ...rises])
        assert.strictEqual(started[0]!.crowd.official_status, "operational")
        const state = JSON.parse((yield* bus.hgetall(RedisKeys.crowdSignals))[source.key] ?? "null")
        assert.include(state, { signal_id: signal.id, started_at: signal.started_at })

        // The status page follows five minutes after the signal (moved five minutes back in the database: the
        // test cannot wait); the worker records the onset, led by the signal.
        const [moved] = yield* sql<{ started_at: Date }>`
          UPDATE crowd_signals SET started_at = started_at - interval '5 minutes' WHERE id = ${signal.id} RETURNING started_at`
        const startedAt = new Date(moved!.started_at).getTime()
        const official = Date.now()
        yield* publish(statusChanged(source.key, name, official, "operational", "down"))
        const onset = yield* eventually(10_000, sql<{ signal_id: string | null; kind: string }>`
          SELECT signal_id, kind FROM crowd_onsets WHERE source_id = ${source.id}`.pipe(Effect.map((r) => (r.length === 0 ? undefined : r))))
        assert.deepStrictEqual(onset.map((o) => [o.kind, o.signal_id]), [["status", signal.id]])
        // An incident opened ten minutes later is the same trouble: not a second onset.
        yield* publish({ ...statusChanged(source.key, name, official + 600_000, "down", "down"), type: "incident.created", incident: {
          id: "inc-1", title: "Outage", status: "investigating", impact: "major", created_at: new Date(official + 600_000).toISOString(),
          resolved_at: null, update_count: 1
        } })
        // A later status change proves the worker read past it.
        const other = yield* catalogSource(1)
        yield* publish(statusChanged(other.key, `Catalog ${other.key}`, official + 601_000, "operational", "degraded"))
        yield* eventually(10_000, sql`SELECT 1 FROM crowd_onsets WHERE source_id = ${other.id}`.pipe(Effect.map((r) => (r.length === 0 ? undefined : true))))
        assert.strictEqual((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM crowd_onsets WHERE source_id = ${source.id}`)[0]!.n, 1)

        // The API's record is what the rule gives for the facts this test made.
        const expected = crowdRecord([{ id: signal.id, startedAt, officialStatus: "operational" }], [{ at: official, signalId: signal.id }], Date.now())
        const record = yield* send("GET", `/sources/${source.key}/crowd/record`, "127.0.0.1")
        assert.strictEqual(record.status, 200, JSON.stringify(record.body))
        assert.deepStrictEqual(record.body, { key: source.key, ...expected, sentence: recordSentence(name, expected) })
        assert.deepStrictEqual([record.body.led, record.body.onsets, record.body.false_alarms], [1, 1, 0])
        assert.approximately(record.body.median_lead_minutes, 5, 0.1)
        assert.match(record.body.sentence, /usually see problems with .* 5 minutes before its status page \(1 of 1 in 90 days\)/u)

        // Eleven minutes on, the reports are out of the window: the sweep ends the signal, once.
        const later = Date.now() + crowdDefaults.windowMs + 60_000
        yield* CrowdWorker.sweepOnce(later).pipe(Effect.provide(services))
        yield* CrowdWorker.sweepOnce(later).pipe(Effect.provide(services))
        const ended = (yield* crowdEventsOf(group)).filter((e) => e.source.key === source.key)
        assert.deepStrictEqual(ended.map((e) => [e.type, e.crowd.signal_id, e.crowd.confidence]), [["crowd.signal_ended", signal.id, 0]])
        assert.strictEqual(ended[0]!.crowd.peak_confidence, confidenceOf(startsAt + 1))
        assert.isUndefined((yield* bus.hgetall(RedisKeys.crowdSignals))[source.key])
        assert.isNull((yield* send("GET", `/sources/${source.key}/crowd`, "127.0.0.1")).body.signal)
      }), 180_000)

    it.effect("false alarms, confirmations during an official outage, and one signal however many processes see the score", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const quiet = yield* catalogSource(1)
        const down = yield* catalogSource(1)
        yield* sql`UPDATE sources SET status = 'down' WHERE id = ${down.id}`
        const now = Date.now()
        const score = { confidence: 90, counted: 8, reason: "8 reporters in 10 min, usually 1 or fewer." }
        // Two processes' CrowdSignals see the same score at once: one signal, one announcement.
        const a = yield* Layer.build(CrowdSignals.layer).pipe(Effect.map(Context.get(CrowdSignals)))
        const b = yield* Layer.build(CrowdSignals.layer).pipe(Effect.map(Context.get(CrowdSignals)))
        yield* Effect.all([a.observe(quiet, score, now), b.observe(quiet, score, now), a.observe(down, score, now)], { concurrency: 3 })
        const signals = yield* sql<{ source_id: string; official_status: string; start_published: boolean }>`
          SELECT source_id, official_status, start_published FROM crowd_signals WHERE source_id IN (${quiet.id}, ${down.id}) ORDER BY official_status`
        assert.deepStrictEqual(signals.map((s) => [s.source_id, s.official_status, s.start_published]), [[down.id, "down", true], [quiet.id, "operational", true]])

        // Within the follow window: pending; after it with no onset: a false alarm (the quiet source),
        // while a signal during an official outage confirms it (neither).
        assert.include(yield* recordAt(now + 60_000, quiet.key), { signals: 1, pending: 1, false_alarms: 0 })
        assert.include(yield* recordAt(now + followMs + 1000, quiet.key), { signals: 1, pending: 0, false_alarms: 1, onsets: 0, led: 0, led_percent: null })
        assert.include(yield* recordAt(now + followMs + 1000, down.key), { signals: 1, pending: 0, false_alarms: 0 })
      }))
  })
})
