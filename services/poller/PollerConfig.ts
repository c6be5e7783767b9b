import { Config } from "effect"

/** Poller settings (README, Configuration). */
export const PollerConfig = Config.all({
  shards: Config.Int("POLLER_SHARDS").pipe(Config.withDefault(16)),
  concurrency: Config.Int("POLLER_SHARD_CONCURRENCY").pipe(Config.withDefault(64)),
  refreshMs: Config.Int("POLLER_REFRESH_MS").pipe(Config.withDefault(15_000)),
  checkTimesMs: Config.Int("POLLER_CHECK_TIMES_MS").pipe(Config.withDefault(1_000)),
  keeperMs: Config.Int("POLLER_KEEPER_MS").pipe(Config.withDefault(3_000)),
  intervalOverrideS: Config.option(Config.Int("POLLER_INTERVAL_OVERRIDE_S")),
  catchUpMs: Config.Int("POLLER_CATCHUP_MS").pipe(Config.withDefault(20_000)),
  catchUpPerS: Config.Int("POLLER_CATCHUP_PER_S").pipe(Config.withDefault(1_000)),
  /** a "poller stats" log line every this many ms, at multiples of it on the wall clock; 0: none */
  statsLogMs: Config.Int("POLLER_STATS_LOG_MS").pipe(Config.withDefault(0))
})
