import { deflateRawSync, inflateRawSync } from "node:zlib"
import type { Since } from "../domain/Changes.ts"
import type { Snapshot } from "../domain/Snapshot.ts"
import type { PolledSource, SnapshotChange } from "./SourceStore.ts"

/**
 * A changed snapshot waiting in a shard for PostgreSQL, packed: its snapshot and since as deflated
 * JSON (decision 0029). A snapshot's objects (components with their names and descriptions, incidents
 * with their updates, a `Since` record) were most of an embedded process's memory when PGlite fell
 * behind and tens of thousands of first observations waited; packed, each is a few hundred bytes.
 */
export interface PackedChange {
  readonly source: PolledSource
  readonly at: Date
  readonly packed: Uint8Array
}

export const packChange = (change: SnapshotChange): PackedChange => ({
  source: change.source,
  at: change.at,
  // Copied out: the deflated bytes are a view of zlib's 16 KB output chunk, which would stay alive with them.
  packed: new Uint8Array(deflateRawSync(JSON.stringify([change.snapshot, change.since]), { level: 1 }))
})

/** The change `packChange` packed. Its text is this process's own JSON of a `Snapshot` and a `Since`, so it is not decoded again. */
export const unpackChange = (held: PackedChange): SnapshotChange => {
  const [snapshot, since] = JSON.parse(inflateRawSync(held.packed).toString("utf8")) as [Snapshot, Since]
  return { source: held.source, snapshot, since, at: held.at }
}
