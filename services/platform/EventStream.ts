import type { Effect } from "effect"
import type { Bus, BusError } from "./Bus.ts"
import { RedisKeys } from "./RedisKeys.ts"

/** The event stream `sg:events` keeps about this many entries (MAXLEN ~). */
export const eventsMaxLen = 1_000_000

/**
 * Appends one domain event to `sg:events` as every consumer reads it: its id and type as fields
 * (for filtering without parsing) and the whole event as JSON in `payload`.
 */
export const writeEvent = (
  bus: Bus["Service"],
  event: { readonly id: string; readonly type: string }
): Effect.Effect<string, BusError> =>
  bus.xadd(RedisKeys.events, { id: event.id, type: event.type, payload: JSON.stringify(event) }, eventsMaxLen)
