import { assert, describe, it } from "@effect/vitest"
import type { MonitorState } from "../domain/Monitor.ts"
import type { TlsInfo } from "./HttpCheck.ts"
import { type MonitorCheckState, pause, resume, sslThresholdStep, step, type StepOutcome, type StepSettings } from "./MonitorState.ts"

const settings = (alert_threshold = 3, ssl_expiry_days: ReadonlyArray<number> = [30, 14, 7, 1]): StepSettings => ({
  monitor: { id: "m1", name: "Shop", url: "https://shop.example/health" },
  alert_threshold,
  ssl_expiry_days
})

const phases = (total_ms: number) => ({ dns_ms: 0, connect_ms: 0, tls_ms: 0, first_byte_ms: total_ms, total_ms })
const up: StepOutcome = { status: "up", http_status: 200, error: "", phases: phases(120) }
const slow: StepOutcome = { status: "degraded", http_status: 200, error: "", phases: phases(2500) }
const failed: StepOutcome = { status: "down", http_status: 503, error: "expected 200-299, got 503", phases: phases(80) }

const t0 = new Date("2026-03-01T10:00:00.000Z")
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000)
const fresh = (state: MonitorState, consecutive_failures = 0, extra: Partial<MonitorCheckState> = {}): MonitorCheckState => ({
  state,
  consecutive_failures,
  last_changed_at: t0.toISOString(),
  ...extra
})

/** Runs outcomes one a minute from `start`, returning every state and the events' types. */
const run = (start: MonitorCheckState, outcomes: ReadonlyArray<StepOutcome>, s = settings()) => {
  let current: MonitorCheckState = start
  const states: Array<string> = []
  const events: Array<string> = []
  outcomes.forEach((o, i) => {
    const r = step(current, o, s, at(i + 1))
    current = r.next
    states.push(`${r.next.state}/${r.next.consecutive_failures}`)
    events.push(...r.events.map((e) => e.type))
  })
  return { states, events, last: current }
}

describe("step: pending", () => {
  it("pending -> up on success, no event", () => {
    const r = step(fresh("pending"), up, settings(), at(1))
    assert.strictEqual(r.next.state, "up")
    assert.deepStrictEqual(r.events, [])
    assert.strictEqual(r.next.last_changed_at, at(1).toISOString())
    assert.strictEqual(r.next.last_checked_at, at(1).toISOString())
  })

  it("pending -> degraded on a slow success, with monitor.degraded", () => {
    const r = step(fresh("pending"), slow, settings(), at(1))
    assert.strictEqual(r.next.state, "degraded")
    assert.deepStrictEqual(r.events.map((e) => e.type), ["monitor.degraded"])
  })

  it("pending counts failures and goes down at the threshold", () => {
    const r = run(fresh("pending"), [failed, failed, failed])
    assert.deepStrictEqual(r.states, ["pending/1", "pending/2", "down/3"])
    assert.deepStrictEqual(r.events, ["monitor.down"])
  })
})

describe("step: up and degraded", () => {
  it("failures below the threshold count but do not change the state", () => {
    const r = step(fresh("up", 1), failed, settings(), at(1))
    assert.strictEqual(r.next.state, "up")
    assert.strictEqual(r.next.consecutive_failures, 2)
    assert.strictEqual(r.next.last_error, "expected 200-299, got 503")
    assert.strictEqual(r.next.last_changed_at, t0.toISOString())
    assert.deepStrictEqual(r.events, [])
  })

  it("up -> down at the threshold, with the last error, status and response time", () => {
    const r = step(fresh("up", 2), failed, settings(), at(3))
    assert.strictEqual(r.next.state, "down")
    assert.strictEqual(r.next.last_changed_at, at(3).toISOString())
    assert.strictEqual(r.events.length, 1)
    const e = r.events[0]!
    assert.strictEqual(e.type, "monitor.down")
    assert.strictEqual(e.previous_state, "up")
    assert.strictEqual(e.current_state, "down")
    assert.strictEqual(e.error, "expected 200-299, got 503")
    assert.strictEqual(e.http_status, 503)
    assert.strictEqual(e.response_time_ms, 80)
    assert.strictEqual(e.timestamp, at(3).toISOString())
    assert.deepStrictEqual(e.monitor, { id: "m1", name: "Shop", url: "https://shop.example/health" })
  })

  it("a success resets the count: failures must be consecutive", () => {
    const r = run(fresh("up"), [failed, failed, up, failed, failed, failed])
    assert.deepStrictEqual(r.states, ["up/1", "up/2", "up/0", "up/1", "up/2", "down/3"])
    assert.deepStrictEqual(r.events, ["monitor.down"])
  })

  it("degraded -> down at the threshold; failures below it keep degraded", () => {
    const r = run(fresh("degraded"), [failed, failed, failed])
    assert.deepStrictEqual(r.states, ["degraded/1", "degraded/2", "down/3"])
    assert.deepStrictEqual(r.events, ["monitor.down"])
  })

  it("up -> degraded on a slow check (monitor.degraded); degraded stays on more slow checks", () => {
    const r = run(fresh("up"), [slow, slow])
    assert.deepStrictEqual(r.states, ["degraded/0", "degraded/0"])
    assert.deepStrictEqual(r.events, ["monitor.degraded"])
  })

  it("degraded -> up on a fast check: monitor.recovered from degraded with how long it lasted", () => {
    const r = step(fresh("degraded"), up, settings(), at(10))
    assert.strictEqual(r.next.state, "up")
    const e = r.events[0]!
    assert.strictEqual(e.type, "monitor.recovered")
    assert.strictEqual(e.previous_state, "degraded")
    assert.strictEqual(e.current_state, "up")
    assert.strictEqual(e.duration_ms, 10 * 60_000)
  })

  it("up stays up on success without events", () => {
    const r = run(fresh("up"), [up, up])
    assert.deepStrictEqual(r.events, [])
    assert.deepStrictEqual(r.states, ["up/0", "up/0"])
  })
})

describe("step: down", () => {
  it("stays down on more failures without new events, counting", () => {
    const r = run(fresh("down", 3), [failed, failed])
    assert.deepStrictEqual(r.states, ["down/4", "down/5"])
    assert.deepStrictEqual(r.events, [])
    assert.strictEqual(r.last.last_changed_at, t0.toISOString())
  })

  it("down -> up on the first success with the downtime, failures reset, error cleared", () => {
    const r = step(fresh("down", 7, { last_error: "timeout" }), up, settings(), at(42))
    assert.strictEqual(r.next.state, "up")
    assert.strictEqual(r.next.consecutive_failures, 0)
    assert.isNull(r.next.last_error)
    assert.strictEqual(r.events.length, 1)
    const e = r.events[0]!
    assert.strictEqual(e.type, "monitor.recovered")
    assert.strictEqual(e.previous_state, "down")
    assert.strictEqual(e.current_state, "up")
    assert.strictEqual(e.duration_ms, 42 * 60_000)
    assert.strictEqual(e.error, "")
    assert.strictEqual(e.http_status, 200)
  })

  it("down -> degraded on a slow first success is a recovery", () => {
    const r = step(fresh("down", 3), slow, settings(), at(1))
    assert.strictEqual(r.next.state, "degraded")
    assert.deepStrictEqual(r.events.map((e) => [e.type, e.previous_state, e.current_state]), [["monitor.recovered", "down", "degraded"]])
  })

  it("an unknown start of downtime gives a null duration", () => {
    const r = step({ state: "down", consecutive_failures: 3 }, up, settings(), at(1))
    assert.isNull(r.events[0]!.duration_ms)
  })
})

describe("step: thresholds 1 and 5", () => {
  it("threshold 1: the first failure is down, the first success recovers", () => {
    const r = run(fresh("up"), [failed, failed, up], settings(1))
    assert.deepStrictEqual(r.states, ["down/1", "down/2", "up/0"])
    assert.deepStrictEqual(r.events, ["monitor.down", "monitor.recovered"])
    const p = run(fresh("pending"), [failed], settings(1))
    assert.deepStrictEqual(p.states, ["down/1"])
  })

  it("threshold 5: four failures are tolerated, the fifth is down", () => {
    const r = run(fresh("up"), [failed, failed, failed, failed, failed], settings(5))
    assert.deepStrictEqual(r.states, ["up/1", "up/2", "up/3", "up/4", "down/5"])
    assert.deepStrictEqual(r.events, ["monitor.down"])
  })
})

describe("step: paused", () => {
  it("a paused monitor ignores outcomes: no change, no event", () => {
    const prev = fresh("paused", 0, { last_error: null })
    for (const o of [up, failed, slow]) {
      const r = step(prev, o, settings(), at(1))
      assert.strictEqual(r.next.state, "paused")
      assert.deepStrictEqual(r.events, [])
      assert.strictEqual(r.next.last_checked_at, null)
    }
  })

  it("pause resets the counters, resume goes to pending; the next checks start from zero", () => {
    const paused = pause(fresh("up", 2), at(1))
    assert.strictEqual(paused.state, "paused")
    assert.strictEqual(paused.consecutive_failures, 0)
    assert.strictEqual(paused.last_changed_at, at(1).toISOString())
    const resumed = resume(paused, at(2))
    assert.strictEqual(resumed.state, "pending")
    assert.strictEqual(resumed.consecutive_failures, 0)
    assert.strictEqual(resumed.last_changed_at, at(2).toISOString())
    const r = run(resumed, [failed, failed, failed])
    assert.deepStrictEqual(r.states, ["pending/1", "pending/2", "down/3"])
    // Resuming a monitor that is not paused changes nothing.
    assert.strictEqual(resume(fresh("down", 4), at(3)).state, "down")
  })
})

describe("step: event ids", () => {
  it("same monitor and transition out of a state begun at the same time give the same id, whichever check sees it", () => {
    const a = step(fresh("up", 2), failed, settings(), at(3)).events[0]!
    // Observed again by a later check (after a restart, the state saved before the change).
    const b = step(fresh("up", 2), failed, settings(), at(4)).events[0]!
    // The same transition out of an "up" that began later: another change.
    const c = step(fresh("up", 2, { last_changed_at: at(2).toISOString() }), failed, settings(), at(3)).events[0]!
    const d = step(fresh("up", 2), failed, { ...settings(), monitor: { id: "m2", name: "x", url: "y" } }, at(3)).events[0]!
    assert.strictEqual(a.id, b.id)
    assert.notStrictEqual(a.id, c.id)
    assert.notStrictEqual(a.id, d.id)
    assert.match(a.id, /^[A-Za-z0-9_-]{22}$/)
  })
})

const cert = (days_left: number): TlsInfo => ({
  valid_to: "2026-04-01T00:00:00.000Z",
  days_left,
  issuer: "Test CA",
  subject: "shop.example",
  authorized: true,
  authorization_error: ""
})
const withCert = (o: StepOutcome, days: number): StepOutcome => ({ ...o, tls: cert(days) })

/** SSL announcements for a sequence of days-left values, as threshold numbers. */
const sslRun = (days: ReadonlyArray<number>, thresholds: ReadonlyArray<number> = [30, 14, 7, 1]) => {
  let current: MonitorCheckState = fresh("up")
  const announced: Array<number> = []
  days.forEach((d, i) => {
    const r = step(current, withCert(up, d), settings(3, thresholds), at(i + 1))
    current = r.next
    for (const e of r.events) if (e.type === "monitor.ssl_expiring") announced.push(e.ssl!.threshold_days)
  })
  return { announced, notified: current.last_ssl_threshold_notified }
}

describe("step: SSL expiry", () => {
  it("thresholds crossed one by one are announced once each", () => {
    const r = sslRun([40, 31, 30, 29, 15, 14, 13, 8, 7, 6, 2, 1, 0, -1])
    assert.deepStrictEqual(r.announced, [30, 14, 7, 1])
    assert.strictEqual(r.notified, 1)
  })

  it("a certificate first seen with 5 days left announces 7 only, then 1 later", () => {
    assert.deepStrictEqual(sslRun([5]).announced, [7])
    assert.deepStrictEqual(sslRun([5, 4, 3, 2, 1]).announced, [7, 1])
  })

  it("renewal (more days than the largest threshold) forgets the announcements", () => {
    const r = sslRun([10, 90, 29])
    assert.deepStrictEqual(r.announced, [14, 30])
    assert.strictEqual(sslRun([10, 90]).notified, null)
  })

  it("the event carries the certificate and the state; the monitor state is unaffected", () => {
    const r = step(fresh("up"), withCert(up, 6), settings(), at(1))
    assert.strictEqual(r.next.state, "up")
    assert.strictEqual(r.next.last_ssl_threshold_notified, 7)
    assert.strictEqual(r.events.length, 1)
    const e = r.events[0]!
    assert.strictEqual(e.type, "monitor.ssl_expiring")
    assert.deepStrictEqual(e.ssl, { threshold_days: 7, days_left: 6, valid_to: "2026-04-01T00:00:00.000Z", issuer: "Test CA", subject: "shop.example" })
    assert.strictEqual(e.previous_state, "up")
    assert.strictEqual(e.current_state, "up")
  })

  it("an SSL announcement and a state change in one check are two events with different ids", () => {
    const r = step(fresh("up", 2), withCert(failed, 3), settings(), at(1))
    assert.deepStrictEqual(r.events.map((e) => e.type), ["monitor.down", "monitor.ssl_expiring"])
    assert.notStrictEqual(r.events[0]!.id, r.events[1]!.id)
    assert.strictEqual(r.events[1]!.current_state, "down")
  })

  it("no thresholds, no announcements; outcomes without a certificate keep what was announced", () => {
    assert.deepStrictEqual(sslRun([5, 1], []).announced, [])
    const r = step(fresh("up", 0, { last_ssl_threshold_notified: 7 }), up, settings(), at(1))
    assert.strictEqual(r.next.last_ssl_threshold_notified, 7)
  })

  it("sslThresholdStep: tightest threshold reached, only downwards", () => {
    assert.deepStrictEqual(sslThresholdStep(null, 5, [30, 14, 7, 1]), { notified: 7, announce: 7 })
    assert.deepStrictEqual(sslThresholdStep(7, 4, [30, 14, 7, 1]), { notified: 7, announce: null })
    assert.deepStrictEqual(sslThresholdStep(7, 20, [30, 14, 7, 1]), { notified: 7, announce: null })
    assert.deepStrictEqual(sslThresholdStep(7, 31, [30, 14, 7, 1]), { notified: null, announce: null })
    assert.deepStrictEqual(sslThresholdStep(null, 0, [30, 14, 7, 1]), { notified: 1, announce: 1 })
  })
})
