/**
 * Key names of the Redis layout (services/poller/README.md, "Redis layout"): the poller writes
 * them (`platform/Publisher.ts`, used by the poller), the notifier and the API read them. Kept here,
 * below both, so that neither imports the other for a name.
 */
export const RedisKeys = {
  source: (key: string) => `sg:source:${key}`,
  sourceComponents: (key: string) => `sg:source:${key}:components`,
  monitor: (id: string) => `sg:monitor:${id}`,
  /** The crowd's open signals: a hash of source key → JSON { signal_id, started_at, confidence, reason } (services/crowd). */
  crowdSignals: "sg:crowd:signals",
  /** Crowd reports of one address (its keyed hash) in one minute (services/crowd). */
  crowdRate: (addressHash: string, minute: number) => `sg:crowd:rate:${addressHash}:${minute}`,
  deltas: "sg:deltas",
  events: "sg:events"
} as const
