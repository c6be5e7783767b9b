import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { crowdWorld, detectSignals, linkOnsets, periodStart, runDetection, runServiceCheck } from "../../bench/crowd.ts"
import { CrowdReports } from "../../services/crowd/CrowdReports.ts"
import { crowdDefaults, crowdScore } from "../../services/domain/CrowdScore.ts"
import * as MemoryBus from "../../services/platform/Bus/Memory.ts"
import * as Postgres from "../../services/platform/Postgres.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { backgroundRate, crowdArrivals, crowdSource } from "../../services/simulator/Crowd.ts"
import { freshDatabase, tempDir, withConfig } from "../support/stores.ts"

/**
 * `statusgrid bench crowd` at a small size: the in-memory detector's behaviour on outages with a
 * strong, immediate crowd and on pure background, and the same decisions through the real
 * CrowdReports with a virtual clock.
 */

const minuteMs = 60_000
const dayMs = 86_400_000

/** Every window the model scores: the whole window and the short ones, longest first. */
const windows = [crowdDefaults.windowMs, ...crowdDefaults.shortWindowsMs.toReversed()]

/**
 * For each of `windows`, the fewest reporters from as many networks in it alone that start a signal where
 * the floor is usual (the model's own threshold).
 */
const thresholds = windows.map((w) => {
  const evidence = (n: number) => {
    const apart = Array.from({ length: n }, () => 1)
    return w === crowdDefaults.windowMs
      ? { networks: apart, recent: crowdDefaults.shortWindowsMs.map(() => []) }
      : { networks: [], recent: crowdDefaults.shortWindowsMs.map((s) => (s === w ? apart : [])) }
  }
  return Array.from({ length: 50 }, (_, i) => i + 1).find((n) =>
    crowdScore({ ...evidence(n), usual: 0, failingMonitorOrganizations: 0 }).confidence >= crowdDefaults.startAt && n >= crowdDefaults.minReporters
  )!
})
/** The fewest reporters that start a signal when they all come within the shortest window. */
const startsAt = Math.min(...thresholds)

describe("statusgrid bench crowd", () => {
  it("every outage with an immediate strong crowd is led, by about the lead less the time its first reporters take", () => {
    const peak = 120
    const result = runDetection({
      sources: 5, days: 3, outages: 3, leadMinutes: 5, rampMinutes: 0, peak: [peak, peak], durationMinutes: [30, 60], scaleSigma: 0, seed: 3
    })
    assert.strictEqual(result.outages, 3)
    assert.strictEqual(result.onsets, 3)
    assert.strictEqual(result.led, 3)
    assert.strictEqual(result.detected_percent, 100)
    // The signal starts once about `startsAt` reporters came: startsAt ÷ (peak per minute) minutes after the first.
    const expectedLead = 5 - startsAt / (peak / 10)
    assert.approximately(result.median_lead_minutes!, expectedLead, 1)
    assert.isAtMost(result.lead_minutes.p90, 5)
    assert.strictEqual(result.false_alarms, 0)
    assert.strictEqual(result.records_check, "crowdRecord's led equals the pooled leads for every source")
  })

  it("pure background at the floor's rate: a signal starts only where a naive scan finds a window's threshold of reporters, rarely", () => {
    // The scale that makes the busiest hour's rate the floor (0.2 reporters per 10 minutes): the usual is at most the floor.
    const busiest = Math.max(...Array.from({ length: 168 }, (_, h) => backgroundRate(h)))
    const scale = crowdDefaults.floor / busiest
    // 10, 5, 3, 2 and 1 minutes.
    assert.deepStrictEqual(thresholds, [5, 4, 4, 4, 3])
    const from = periodStart
    const to = from + 10 * dayMs
    let signalsN = 0
    for (let i = 0; i < 5; i++) {
      const source = crowdSource(`floor-${i}`, { scale })
      const reports = crowdArrivals(source, from - 28 * dayMs, to)
      const { signals, evaluations } = detectSignals(reports, { from, to, outages: [], sweepMs: 30_000 })
      assert.isAbove(evaluations, 100)
      signalsN += signals.length
      // The naive scan: the first report of the period after which one of the windows (t − w, t] holds its
      // threshold of counted reporters (at most `perNetwork` per network; background reporters do not repeat
      // within a window here).
      const firstCrossing = reports.find((r) => {
        if (r.at < from) return false
        return windows.some((w, k) => {
          const inWindow = reports.filter((x) => x.at > r.at - w && x.at <= r.at)
          const byNetwork = new Map<number, Set<number>>()
          for (const x of inWindow) byNetwork.set(x.network, (byNetwork.get(x.network) ?? new Set()).add(x.reporter))
          const counted = [...byNetwork.values()].reduce((n, set) => n + Math.min(set.size, crowdDefaults.perNetwork), 0)
          return counted >= thresholds[k]!
        })
      })
      assert.strictEqual(signals[0]?.startedAt, firstCrossing?.at)
      assert.isAtMost(signals.length, 1)
    }
    // Rare over these 50 source-days: at most one.
    assert.isAtMost(signalsN, 1)
  })

  it("a signal that starts during the official outage confirms it: not led, not a false alarm", () => {
    // Reports start a minute after the flip: the signal comes after it.
    const world = crowdWorld({ sources: 2, days: 2, outages: 2, leadMinutes: 0, rampMinutes: 0, peak: [120, 120], durationMinutes: [30, 30], scaleSigma: 0, seed: 5 })
    for (const s of world.sources) {
      const outages = s.outages.map((o) => ({ ...o, at: o.at, leadMs: -minuteMs }))
      const reports = crowdArrivals(s.source, world.historyFrom, world.to, outages)
      const { signals } = detectSignals(reports, { from: world.from, to: world.to, outages, sweepMs: 30_000 })
      const facts = signals.map((g, i) => ({ id: String(i), startedAt: g.startedAt, officialStatus: g.officialStatus }))
      const onsets = linkOnsets(facts, outages)
      for (const o of outages) assert.isTrue(signals.some((g) => g.startedAt > o.at && g.officialStatus === "down"))
      assert.isTrue(onsets.every((o) => o.signalId === null))
    }
  })

  it.live("the real CrowdReports with a virtual clock starts and ends the signals the in-memory detector does", () =>
    Effect.gen(function*() {
      const result = yield* runServiceCheck({ sources: 2, hours: 3, leadMinutes: 5, rampMinutes: 2, peak: [30, 40], seed: 11 })
      // Each source has an outage whose crowd starts a signal.
      assert.isAtLeast(result.detector_signals, 2)
      assert.strictEqual(result.service_signals, result.detector_signals)
      assert.strictEqual(result.matched, result.detector_signals)
      assert.strictEqual(result.records_equal, 2)
      assert.isTrue(result.all_match)
      assert.deepStrictEqual(result.differences, [])
      assert.isAbove(result.reports_sent, 0)
      assert.strictEqual(result.sweeps, 3 * 120)
    }).pipe(
      Effect.provide(CrowdReports.layer.pipe(Layer.provideMerge(SecretBox.layer))),
      Effect.provide(Layer.mergeAll(
        Layer.unwrap(Effect.map(freshDatabase, (url) => Postgres.layerServer(url, { maxConnections: 4 }))),
        MemoryBus.layer
      ).pipe(Layer.provideMerge(Layer.unwrap(Effect.map(tempDir("bench-crowd"), (dir) =>
        withConfig({ DATA_DIR: dir, SECRETS_KEY: randomBytes(32).toString("base64"), CROWD_REPORTS_PER_MINUTE: "100000000" })
      )))))
    ), 120_000)
})
