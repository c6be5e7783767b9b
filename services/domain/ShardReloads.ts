import { Context, type Effect } from "effect"

/**
 * Tells the shards that own some sources (or monitors) to re-read them now, so
 * an edit made through the API is polled on its next check rather than after
 * the next periodic refresh (`POLLER_REFRESH_MS`, the fallback for writers
 * outside the cluster such as `statusgrid catalog import`).
 *
 * The tag lives here so that writers (orgs) can ask for it without importing
 * the poller; `poller/ShardReloads.ts` provides it through the cluster.
 */
export class ShardReloads extends Context.Service<ShardReloads, {
  sources(keys: ReadonlyArray<string>): Effect.Effect<void>
  monitors(ids: ReadonlyArray<string>): Effect.Effect<void>
}>()("statusgrid/ShardReloads") {}
