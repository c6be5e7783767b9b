import { Config } from "effect"
import { nonNegativeInt, optionalPositiveInt, positiveInt } from "../platform/Settings.ts"

/**
 * Poller settings (README, Configuration). Read when a runner starts (Poller.layer), so that a value
 * out of range stops `statusgrid start` or `runner` with one line naming it, not a shard later.
 */
export const PollerConfig = Config.all({
  shards: positiveInt("POLLER_SHARDS", 16),
  concurrency: positiveInt("POLLER_SHARD_CONCURRENCY", 64),
  refreshMs: positiveInt("POLLER_REFRESH_MS", 15_000),
  /** how often a shard saves its sources' last check and error to PostgreSQL */
  checkTimesMs: positiveInt("POLLER_CHECK_TIMES_MS", 1_000),
  keeperMs: positiveInt("POLLER_KEEPER_MS", 3_000),
  intervalOverrideS: optionalPositiveInt("POLLER_INTERVAL_OVERRIDE_S"),
  catchUpMs: nonNegativeInt("POLLER_CATCHUP_MS", 20_000),
  catchUpPerS: positiveInt("POLLER_CATCHUP_PER_S", 1_000),
  /** a "poller stats" log line every this many ms, at multiples of it on the wall clock; 0: none */
  statsLogMs: nonNegativeInt("POLLER_STATS_LOG_MS", 0)
})
