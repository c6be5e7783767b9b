import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { Snapshot } from "../domain/Snapshot.ts"
import type { SourceStatus } from "../domain/Status.ts"
import { eventsBetween, type SourceRef } from "../domain/Changes.ts"
import { Publisher } from "../platform/Publisher.ts"

/** The snapshot of a manual source: its status as set, nothing else (it has no page to read). */
export const manualSnapshot = (status: SourceStatus): Snapshot => ({
  provider: "manual",
  status,
  reported_status: status,
  description: "",
  components: [],
  incidents: [],
  maintenances: [],
  regions: [],
  warnings: []
})

/**
 * Publishes a status set on a manual custom source exactly as the poller
 * publishes a polled change (`Publisher.changed`: state, delta and the events
 * of `Changes.eventsBetween`, so `source.status_changed` of the same shape).
 * Each change set through the API is its own observation: its events' ids
 * also carry the change's time, so setting down, up and down again makes
 * three alerts, not one de-duplicated away.
 */
export const publishManualChange = Effect.fn("ManualSourceChange.publishManualChange")(function*(source: SourceRef, previous: SourceStatus, next: SourceStatus, at: Date) {
  if (previous === next) return
  const publisher = yield* Publisher
  const before = manualSnapshot(previous)
  const after = manualSnapshot(next)
  const observed = { snapshot: before, since: { source: at.toISOString(), components: {} } }
  const events = eventsBetween(source, observed, after, at).map((event) => ({
    ...event,
    id: createHash("sha256").update(`${event.id}\u0000manual\u0000${at.toISOString()}`).digest("base64url").slice(0, 22)
  }))
  yield* publisher.changed(source.key, before, after, events, at)
})
