import { describe, expect, it } from "vitest"
import { crowdRecord, followMs, median, recordSentence } from "./CrowdRecord.ts"

const min = 60_000

describe("a provider's crowd record", () => {
  it("medians by hand", () => {
    expect(median([])).toBeNull()
    expect(median([7])).toBe(7)
    expect(median([9, 1, 5])).toBe(5)
    expect(median([4, 1, 3, 10])).toBe(3.5)
  })

  it("counts leads, false alarms, pending signals and confirmations as the rule says", () => {
    const now = 100 * 24 * 60 * min
    const signals = [
      { id: "led-3", startedAt: now - 50 * 60 * min, officialStatus: "operational" },
      { id: "led-7", startedAt: now - 30 * 60 * min, officialStatus: "operational" },
      { id: "led-8", startedAt: now - 20 * 60 * min, officialStatus: "operational" },
      { id: "false", startedAt: now - 10 * 60 * min, officialStatus: "operational" },
      { id: "confirms", startedAt: now - 9 * 60 * min, officialStatus: "down" },
      { id: "young", startedAt: now - 5 * min, officialStatus: "operational" }
    ]
    const onsets = [
      { at: now - 50 * 60 * min + 3 * min, signalId: "led-3" },
      { at: now - 30 * 60 * min + 7 * min, signalId: "led-7" },
      { at: now - 20 * 60 * min + 8 * min, signalId: "led-8" },
      { at: now - 2 * 60 * min, signalId: null }
    ]
    const record = crowdRecord(signals, onsets, now)
    expect(record).toEqual({
      days: 90,
      signals: 6,
      onsets: 4,
      led: 3,
      led_percent: 75,
      median_lead_minutes: 7,
      false_alarms: 1,
      false_alarms_per_30_days: 0.33,
      pending: 1
    })
    // The young signal becomes a false alarm once the follow window has passed with no onset.
    expect(crowdRecord(signals, onsets, now + followMs).false_alarms).toBe(2)
    expect(recordSentence("Acme", record)).toBe("statusgrid users usually see problems with Acme 7 minutes before its status page (3 of 4 in 90 days).")
  })

  it("says so when nothing happened, or when the crowd never came first", () => {
    const quiet = crowdRecord([], [], 0)
    expect(quiet.led_percent).toBeNull()
    expect(quiet.median_lead_minutes).toBeNull()
    expect(recordSentence("Acme", quiet)).toBe("No problems with Acme in the last 90 days, from its status page or its users.")
    const late = crowdRecord([], [{ at: 0, signalId: null }], 0)
    expect(recordSentence("Acme", late)).toBe("In the last 90 days statusgrid users have not reported problems with Acme before its status page showed them.")
    const close = crowdRecord([{ id: "s", startedAt: 0, officialStatus: "operational" }], [{ at: 20_000, signalId: "s" }], 0)
    expect(recordSentence("Acme", close)).toBe("statusgrid users usually see problems with Acme less than a minute before its status page (1 of 1 in 90 days).")
  })
})
