import { Schema } from "effect"
import { ComponentStatus, IncidentImpact, IncidentStatus, SourceStatus } from "./Status.ts"
import { NullOr } from "./NullOr.ts"

/** Lifecycle of a scheduled maintenance, normalized across providers. */
export const MaintenanceStatus = Schema.Literals(["scheduled", "in_progress", "verifying", "completed", "cancelled"])
export type MaintenanceStatus = typeof MaintenanceStatus.Type

/** An ISO 8601 UTC timestamp, e.g. 2026-11-22T00:00:00.000Z. */
export const Timestamp = Schema.String
export type Timestamp = typeof Timestamp.Type

/**
 * One component of a source. Ids are the provider's own (stable across
 * polls). A group is a container: its status is the worst of its children
 * unless the provider states one.
 */
export const SnapshotComponent = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  status: ComponentStatus,
  parent_id: Schema.NullOr(Schema.String),
  is_group: Schema.Boolean,
  position: Schema.Number,
  region: Schema.NullOr(Schema.String)
})
export type SnapshotComponent = typeof SnapshotComponent.Type

/** One update the provider published on an incident. */
export const SnapshotIncidentUpdate = Schema.Struct({
  /** The provider's id of the update (stable across polls). */
  id: Schema.String,
  status: IncidentStatus,
  body: Schema.String,
  created_at: Timestamp
})
export type SnapshotIncidentUpdate = typeof SnapshotIncidentUpdate.Type

export const SnapshotIncident = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  status: IncidentStatus,
  impact: IncidentImpact,
  created_at: Timestamp,
  updated_at: Timestamp,
  resolved_at: NullOr(Timestamp),
  update_count: Schema.Number,
  /** Ids of affected components (of this snapshot's `components`). */
  components: Schema.Array(Schema.String),
  url: Schema.NullOr(Schema.String),
  /** Region the incident is about, where the provider says. */
  region: Schema.NullOr(Schema.String),
  /** The updates the provider published, oldest first; absent when the adapter does not read them. */
  updates: Schema.optionalKey(Schema.Array(SnapshotIncidentUpdate))
})
export type SnapshotIncident = typeof SnapshotIncident.Type

export const SnapshotMaintenance = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  status: MaintenanceStatus,
  scheduled_for: Timestamp,
  scheduled_until: NullOr(Timestamp),
  components: Schema.Array(Schema.String),
  url: Schema.NullOr(Schema.String)
})
export type SnapshotMaintenance = typeof SnapshotMaintenance.Type

export const RegionStatus = Schema.Struct({
  region: Schema.String,
  status: SourceStatus
})
export type RegionStatus = typeof RegionStatus.Type

/**
 * What one poll of a source found, the same shape for every provider.
 * `status` is the effective status (see services/adapters/README.md);
 * `reported_status` is what the provider's own indicator said, when it has one.
 */
export const Snapshot = Schema.Struct({
  provider: Schema.String,
  status: SourceStatus,
  reported_status: Schema.NullOr(SourceStatus),
  description: Schema.String,
  components: Schema.Array(SnapshotComponent),
  /** Open incidents and recently resolved ones, newest first. */
  incidents: Schema.Array(SnapshotIncident),
  /** Upcoming and active maintenances. */
  maintenances: Schema.Array(SnapshotMaintenance),
  /** Per-region status where the provider has regions; empty otherwise. */
  regions: Schema.Array(RegionStatus),
  /** Values the adapter did not recognise and how it mapped them. Logged by callers, never fatal. */
  warnings: Schema.Array(Schema.String)
})
export type Snapshot = typeof Snapshot.Type
