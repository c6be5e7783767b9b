import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import type { Forbidden } from "../domain/api/Errors.ts"
import type { Principal } from "../domain/Principal.ts"
import { rowsOf } from "../platform/Rows.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { type CalendarEntry, icsOf } from "./CalendarIcs.ts"
import { NullOr } from "../domain/NullOr.ts"

/** `cal_` and 24 random bytes in base64url (192 bits). */
const newCalendarToken = () => `cal_${randomBytes(24).toString("base64url")}`
export const calendarTokenPattern = /^cal_[A-Za-z0-9_-]{32}$/

/** The path of an organization's feed; the page prefixes its origin (and offers `webcal:`). */
export const calendarFeedPath = (token: string) => `/calendar/${token}.ics`

/** The organization's iCal subscription, as its settings page shows it. */
export interface CalendarFeed {
  readonly path: string
  readonly created_at: string
}

/** What the feed holds: from 90 days back to a year ahead. */
const feedPastMs = 90 * 86_400_000
const feedFutureMs = 366 * 86_400_000
/** Providers' maintenances carry no revision: SEQUENCE is the seconds from 2020 to their last change (rises with each). */
const sequenceEpoch = Date.UTC(2020, 0, 1)

const WindowRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  description: Schema.String,
  stack_name: Schema.NullOr(Schema.String),
  starts_at: Schema.Date,
  ends_at: Schema.Date,
  revision: Schema.Number,
  updated_at: Schema.Date
})
const ProviderRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  status: Schema.String,
  url: Schema.NullOr(Schema.String),
  source_name: Schema.String,
  source_key: Schema.String,
  scheduled_for: Schema.Date,
  scheduled_until: NullOr(Schema.Date),
  updated_at: Schema.Date
})
const FeedRow = Schema.Struct({ organization_id: Schema.String, organization_name: Schema.String, slug: Schema.String })
const decodeWindows = rowsOf("maintenance_windows", WindowRow)
const decodeProvider = rowsOf("scheduled_maintenances", ProviderRow)
const decodeFeeds = rowsOf("calendar_feeds", FeedRow)
const decodeCreated = rowsOf("calendar_feeds", Schema.Struct({ created_at: Schema.Date }))

const iso = (d: Date) => new Date(d).toISOString()

/**
 * The maintenance calendar of an organization: its own maintenance windows
 * and the maintenances its providers announced for the sources its stacks
 * show, for the calendar page and for the iCal subscription
 * (`/calendar/<token>.ics`, RFC 5545, one secret token per organization;
 * a new token replaces the old one, revoking deletes it, both audited).
 * Windows are changed through MaintenanceWindows, which bumps their
 * revision (the events' SEQUENCE) so that clients update them in place.
 */
export class MaintenanceCalendar extends Context.Service<MaintenanceCalendar, {
  /** Windows and providers' maintenances overlapping [from, to), by start. `base`: the portal's origin, for the windows' links. */
  entries(principal: Principal, from: Date, to: Date, base: string): Effect.Effect<ReadonlyArray<CalendarEntry>, Forbidden>
  /** The organization's subscription, or null when it has none. */
  feed(principal: Principal): Effect.Effect<CalendarFeed | null, Forbidden>
  /** A new secret URL; the previous one (if any) stops working at once. */
  createFeed(principal: Principal): Effect.Effect<CalendarFeed, Forbidden>
  /** No subscription any more; false when there was none. */
  revokeFeed(principal: Principal): Effect.Effect<boolean, Forbidden>
  /** The calendar of a token as iCal text; undefined for an unknown or replaced token. */
  ics(token: string, base: string, now: Date): Effect.Effect<string | undefined>
}>()("statusgrid/orgs/MaintenanceCalendar") {
  static readonly layer = Layer.effect(
    MaintenanceCalendar,
    Effect.gen(function*() {
      const sql = yield* SqlClient

      const entriesOf = (organizationId: string, slug: string, from: Date, to: Date, base: string) =>
        Effect.gen(function*() {
          const [windows, provider] = yield* Effect.all([
            sql`
              SELECT w.id, w.title, w.description, s.name AS stack_name, w.starts_at, w.ends_at, w.revision, w.updated_at
              FROM maintenance_windows w LEFT JOIN stacks s ON s.id = w.stack_id
              WHERE w.organization_id = ${organizationId}::uuid AND w.ends_at > ${from} AND w.starts_at < ${to}
              ORDER BY w.starts_at, w.id`.pipe(Effect.flatMap(decodeWindows)),
            sql`
              SELECT m.id, m.title, m.status, m.url, src.name AS source_name, src.key AS source_key,
                m.scheduled_for, m.scheduled_until, m.updated_at
              FROM scheduled_maintenances m JOIN sources src ON src.id = m.source_id
              WHERE m.source_id IN (
                  SELECT coalesce(si.source_id, c.source_id) FROM stack_items si
                  JOIN stacks st ON st.id = si.stack_id LEFT JOIN components c ON c.id = si.component_id
                  WHERE st.organization_id = ${organizationId}::uuid)
                AND coalesce(m.scheduled_until, m.scheduled_for + interval '1 hour') > ${from} AND m.scheduled_for < ${to}
              ORDER BY m.scheduled_for, m.id`.pipe(Effect.flatMap(decodeProvider))
          ], { concurrency: 2 })
          const entries: Array<CalendarEntry> = [
            ...windows.map((w): CalendarEntry => ({
              uid: `window-${w.id}`,
              kind: "window",
              title: w.title,
              description: w.description,
              starts_at: iso(w.starts_at),
              ends_at: iso(w.ends_at),
              scope: w.stack_name ?? "the whole organization",
              cancelled: false,
              revision: w.revision,
              updated_at: iso(w.updated_at),
              url: `${base}/settings/${slug}/maintenance/${w.id}`
            })),
            ...provider.map((m): CalendarEntry => ({
              uid: `provider-${m.id}`,
              kind: "provider",
              title: m.title,
              description: "",
              starts_at: iso(m.scheduled_for),
              ends_at: m.scheduled_until === null ? null : iso(m.scheduled_until),
              scope: m.source_name,
              cancelled: m.status === "cancelled",
              revision: Math.max(0, Math.floor((new Date(m.updated_at).getTime() - sequenceEpoch) / 1000)),
              updated_at: iso(m.updated_at),
              url: m.url ?? `${base}/sources/${m.source_key}`
            }))
          ]
          return entries.toSorted((a, b) => a.starts_at.localeCompare(b.starts_at) || a.uid.localeCompare(b.uid))
        }).pipe(Effect.orDie)

      const slugOf = (organizationId: string) =>
        sql<{ slug: string }>`SELECT slug FROM organizations WHERE id = ${organizationId}::uuid`.pipe(
          Effect.map((rows) => rows[0]?.slug ?? ""),
          Effect.orDie
        )

      const entries = Effect.fn("MaintenanceCalendar.entries")(function*(principal: Principal, from: Date, to: Date, base: string) {
        yield* requirePermission(principal, "view")
        return yield* entriesOf(principal.organization_id, yield* slugOf(principal.organization_id), from, to, base)
      })

      const feed = Effect.fn("MaintenanceCalendar.feed")(function*(principal: Principal) {
        yield* requirePermission(principal, "view")
        const [row] = yield* sql<{ token: string; created_at: Date }>`
          SELECT token, created_at FROM calendar_feeds WHERE organization_id = ${principal.organization_id}::uuid`.pipe(Effect.orDie)
        return row === undefined ? null : { path: calendarFeedPath(row.token), created_at: iso(row.created_at) }
      })

      const createFeed = Effect.fn("MaintenanceCalendar.createFeed")(function*(principal: Principal) {
        yield* requirePermission(principal, "content.write")
        const token = newCalendarToken()
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [previous] = yield* sql`
            SELECT 1 FROM calendar_feeds WHERE organization_id = ${principal.organization_id}::uuid FOR UPDATE`
          const [row] = yield* sql`
            INSERT INTO calendar_feeds (organization_id, token, created_by)
            VALUES (${principal.organization_id}::uuid, ${token}, ${principal.actor.kind === "user" ? principal.actor.id : null}::uuid)
            ON CONFLICT (organization_id) DO UPDATE SET token = excluded.token, created_by = excluded.created_by, created_at = now()
            RETURNING created_at`.pipe(Effect.flatMap(decodeCreated))
          yield* recordAudit(principal, {
            action: previous === undefined ? "calendar_feed.created" : "calendar_feed.replaced",
            entity_type: "calendar_feed",
            entity_id: principal.organization_id,
            after: { replaced: previous !== undefined }
          })
          return { path: calendarFeedPath(token), created_at: iso(row!.created_at) } satisfies CalendarFeed
        })).pipe(Effect.orDie)
      })

      const revokeFeed = Effect.fn("MaintenanceCalendar.revokeFeed")(function*(principal: Principal) {
        yield* requirePermission(principal, "content.write")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const deleted = yield* sql`
            DELETE FROM calendar_feeds WHERE organization_id = ${principal.organization_id}::uuid RETURNING organization_id`
          if (deleted.length === 0) return false
          yield* recordAudit(principal, {
            action: "calendar_feed.revoked",
            entity_type: "calendar_feed",
            entity_id: principal.organization_id
          })
          return true
        })).pipe(Effect.orDie)
      })

      const ics = Effect.fn("MaintenanceCalendar.ics")(function*(token: string, base: string, now: Date) {
        if (!calendarTokenPattern.test(token)) return undefined
        const [row] = yield* sql`
          SELECT f.organization_id, o.name AS organization_name, o.slug FROM calendar_feeds f
          JOIN organizations o ON o.id = f.organization_id WHERE f.token = ${token}`.pipe(Effect.flatMap(decodeFeeds), Effect.orDie)
        if (row === undefined) return undefined
        const from = new Date(now.getTime() - feedPastMs)
        const to = new Date(now.getTime() + feedFutureMs)
        const list = yield* entriesOf(row.organization_id, row.slug, from, to, base)
        return icsOf({ name: `${row.organization_name} maintenance · statusgrid`, host: new URL(base).hostname, entries: list })
      })

      // The audit log runs on this layer's connection (and so inside its transactions).
      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      return MaintenanceCalendar.of({
        entries,
        feed,
        createFeed: (principal) => onSql(createFeed(principal)),
        revokeFeed: (principal) => onSql(revokeFeed(principal)),
        ics
      })
    })
  )
}
