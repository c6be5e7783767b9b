import { Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { detect, type DetectError } from "../adapters/detect.ts"
import { Fetcher } from "../adapters/Fetcher.ts"
import { isProviderId, providerIds } from "../adapters/registry.ts"
import { type CustomSource, type CustomSourceCreate, CustomSourceKind, type CustomSourcePatch } from "../domain/api/CustomSources.ts"
import { CustomSource as CustomSourceSchema } from "../domain/api/CustomSources.ts"
import { type Forbidden, InvalidParameter, NotFound, type PlanLimitReached, Unprocessable } from "../domain/api/Errors.ts"
import type { Principal } from "../domain/Principal.ts"
import { type CheckClass, checkClassIntervalSeconds, inCategoryOrder, keyFromName, SourceKey } from "../domain/Source.ts"
import { checkUrlTarget, SourceGuardConfig, type TargetRefused } from "../platform/Outbound.ts"
import { Publisher } from "../platform/Publisher.ts"
import { rowsOf } from "../platform/Rows.ts"
import { SourceRow as BaseSourceRow, categoriesColumn, lastCheckedAt } from "../platform/SourceRow.ts"
import { ShardReloads } from "../domain/ShardReloads.ts"
import { requirePermission } from "./Access.ts"
import { recordAudit } from "./Audit.ts"
import { ensureWithinLimit } from "./Limits.ts"
import { publishManualChange } from "./ManualSourceChange.ts"
import { cursorAt, listPage, type PageRequest } from "./Paging.ts"
import type { Page } from "../domain/api/Paging.ts"
import { NullOr } from "../domain/NullOr.ts"

/** The rows of the queries below, decoded by Schemas compiled once (services/platform/Rows.ts). */
const sourcesKeyRows = rowsOf("sources", Schema.Struct({ key: Schema.String }))
const sourcesIdRows = rowsOf("sources", Schema.Struct({ id: Schema.String }))


/** The catalog's row (platform/SourceRow.ts) and what only custom sources have. */
const SourceRow = Schema.Struct({
  ...BaseSourceRow.fields,
  kind: CustomSourceKind,
  last_changed_at: NullOr(Schema.DateTimeUtcFromDate),
  cursor_at: Schema.String
})
type SourceRow = typeof SourceRow.Type
const decodeSources = rowsOf("sources", SourceRow)

/** What every query of this module selects from `sources t`. */
const columns = `t.id, t.key, t.name, t.description, t.kind, t.status, t.logo_url, t.status_page_url, t.service_url,
  t.components_count, t.incidents_count, ${lastCheckedAt("t")}, t.last_changed_at, t.check_class, t.provider_type,
  t.verified, t.poll_interval_s < 60 AS realtime, t.has_history AS historical, (cardinality(t.regions) > 0 OR jsonb_array_length(t.region_statuses) > 0) AS regional, t.region_statuses,
  ${categoriesColumn("t")},
  ${cursorAt}`

const toCustomSource = (row: SourceRow): CustomSource => ({
  id: row.id,
  name: row.name,
  key: row.key,
  description: row.description,
  status: row.status,
  logo_url: row.logo_url,
  status_page_url: row.status_page_url,
  service_url: row.service_url,
  components_count: row.components_count,
  incidents_count: row.incidents_count,
  categories: inCategoryOrder(row.categories),
  last_checked_at: row.last_checked_at,
  check_class: row.check_class,
  provider_type: row.provider_type,
  reliability: { verified: row.verified, realtime: row.realtime, historical: row.historical, regional: row.regional },
  regions: row.region_statuses,
  kind: row.kind,
  last_changed_at: row.last_changed_at
})

const encodeRecord = Schema.encodeSync(CustomSourceSchema)
const isSourceKey = Schema.is(SourceKey)

/** Keys leave room for a `-<n>` suffix within the 128 characters a source key may have. */
const maxBaseKeyLength = 120

/** `<organization slug>-<name as a key>`: unique among organizations as slugs are, readable in URLs and logs. */
export const baseKey = (organizationSlug: string, name: string): string =>
  `${organizationSlug}-${keyFromName(name)}`.slice(0, maxBaseKeyLength).replace(/-+$/, "")

/** The first of `base`, `base-2`, `base-3`, ... that `taken` does not hold. */
export const freeKey = (base: string, taken: ReadonlySet<string>): string => {
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`
}

/** Custom URL sources are read as often as the catalog's high-traffic services. */
const urlCheckClass: CheckClass = "high"

/** Times a key is chosen again when another organization took it between choosing and inserting. */
const keyAttempts = 5

const notFound = (key: string) => new NotFound({ field: "key", message: `no custom source ${key} in this organization` })

/** The mode's fields, or 400 naming the first that does not belong to it. */
const modeOf = Effect.fn("CustomSources.modeOf")(function*(input: CustomSourceCreate) {
  const kind: CustomSourceKind = input.type ?? "url"
  if (kind === "manual") {
    for (const field of ["status_page_url", "status_page_type"] as const) {
      if (input[field] !== undefined) {
        return yield* new InvalidParameter({ field, message: `${field} is for URL sources; a manual source has none` })
      }
    }
    return { kind, url: null } as const
  }
  if (input.status !== undefined) {
    return yield* new InvalidParameter({
      field: "status",
      message: "status is set only on manual sources (type: manual); a URL source's status is read from its page"
    })
  }
  if (input.status_page_url === undefined) {
    return yield* new InvalidParameter({
      field: "status_page_url",
      message: "status_page_url is required (or type: manual for a source whose status you set)"
    })
  }
  return { kind, url: input.status_page_url } as const
})

/**
 * An organization's custom sources: rows of `sources` with its
 * organization_id, never shown by the public sources API. URL sources are
 * polled by the shards like catalog sources (the provider detected here when
 * not given); manual sources carry the status users set.
 *
 * Their status page URLs must resolve to public addresses unless the operator
 * allows private targets (MONITOR_ALLOW_PRIVATE, OUTBOUND_ALLOW_ADDRESSES), as
 * for monitors: detection here and the shards' polling would otherwise let an
 * organization read its way into the operator's network. The check here is
 * the early, readable refusal; the guarded connections of detection and
 * polling (decision 0009) refuse every later redirect or DNS change.
 */
export class CustomSources extends Context.Service<CustomSources, {
  list(principal: Principal, page: PageRequest): Effect.Effect<Page<CustomSource>, Forbidden | InvalidParameter>
  get(principal: Principal, key: string): Effect.Effect<CustomSource, Forbidden | NotFound>
  create(principal: Principal, input: CustomSourceCreate): Effect.Effect<CustomSource, Forbidden | InvalidParameter | PlanLimitReached | Unprocessable>
  update(principal: Principal, key: string, patch: CustomSourcePatch): Effect.Effect<CustomSource, Forbidden | InvalidParameter | NotFound>
  remove(principal: Principal, key: string): Effect.Effect<void, Forbidden | NotFound>
}>()("statusgrid/orgs/CustomSources") {
  static readonly layer = Layer.effect(
    CustomSources,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const fetcher = yield* Fetcher
      const policy = yield* Effect.orDie(SourceGuardConfig)
      const reloads = yield* Effect.serviceOption(ShardReloads)
      const publisher = yield* Publisher

      /** Tells the source's shard, when this process reaches the shards; bounded, as the shards also refresh on their own. */
      const reload = (key: string) =>
        Option.isNone(reloads) ? Effect.void : reloads.value.sources([key]).pipe(Effect.timeout(Duration.seconds(2)), Effect.ignore)

      const guard = (url: string) =>
        checkUrlTarget(url, policy).pipe(
          Effect.mapError((refused: TargetRefused) => {
            const kind = `a ${(refused.address_kind ?? "private").replace(/_/g, " ")} address`
            return new InvalidParameter({
              field: "status_page_url",
              message: refused.reason !== "private_address"
                ? `status_page_url ${refused.message}`
                : refused.host === refused.address
                ? `status_page_url ${refused.host} is ${kind}; custom sources may only read public addresses`
                : `status_page_url ${refused.host} resolves to ${refused.address}, ${kind}; custom sources may only read public addresses`
            })
          })
        )

      /** Provider and polling URL of a URL source: as given, or detected (422 when the page gives no clue). */
      const provider = Effect.fn("CustomSources.provider")(function*(input: CustomSourceCreate, url: string) {
        yield* guard(url)
        if (input.status_page_type !== undefined) {
          if (!isProviderId(input.status_page_type)) {
            return yield* new InvalidParameter({
              field: "status_page_type",
              message: `status_page_type must be one of ${providerIds.join(", ")}`
            })
          }
          return { provider: input.status_page_type, pollUrl: null }
        }
        const detected = yield* detect(url).pipe(
          Effect.provideService(Fetcher, fetcher),
          Effect.mapError((error: DetectError) =>
            error.refused === true
              ? new InvalidParameter({
                field: "status_page_url",
                message: `status_page_url ${url} is refused: ${error.message.replace(/^the page did not answer: refused: /, "")}`
              })
              : new Unprocessable({
                field: "status_page_url",
                message: `the provider of ${url} could not be detected (${error.message}); give status_page_type`
              })
          )
        )
        // Detection may have found the document elsewhere (a feed link): that address is read, so it is guarded too.
        if (detected.url !== url) {
          yield* guard(detected.url).pipe(
            Effect.mapError((refused) =>
              new Unprocessable({ field: "status_page_url", message: `the status page points to ${detected.url}, which is refused: ${refused.message}` })
            )
          )
        }
        return { provider: detected.provider, pollUrl: detected.url === url ? null : detected.url }
      })

      const selectOne = (organizationId: string, key: string, lock: boolean) =>
        sql`
          SELECT ${sql.literal(columns)} FROM sources t
          WHERE t.key = ${key} AND t.organization_id = ${organizationId}::uuid ${sql.literal(lock ? "FOR UPDATE OF t" : "")}`.pipe(Effect.flatMap(decodeSources),
            Effect.map((rows) => rows[0])
          )

      const list = Effect.fn("CustomSources.list")(function*(principal: Principal, page: PageRequest) {
        yield* requirePermission(principal, "view")
        return yield* listPage({
          page,
          select: (where, limit) =>
            sql`
              SELECT ${sql.literal(columns)} FROM sources t
              WHERE t.organization_id = ${principal.organization_id}::uuid AND ${where}
              ORDER BY t.created_at, t.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeSources)),
          map: toCustomSource
        })
      })

      const get = Effect.fn("CustomSources.get")(function*(principal: Principal, key: string) {
        yield* requirePermission(principal, "view")
        // A malformed key names no source; it never reaches the database.
        const row = isSourceKey(key) ? yield* selectOne(principal.organization_id, key, false).pipe(Effect.orDie) : undefined
        if (row === undefined) return yield* notFound(key)
        return toCustomSource(row)
      })

      /** Inserts under the first free key; another organization may take it meanwhile (keys are global), so it retries. */
      const insert = Effect.fn("CustomSources.insert")(function*(principal: Principal, input: CustomSourceCreate, values: {
        readonly kind: CustomSourceKind
        readonly url: string | null
        readonly provider: string | null
        readonly pollUrl: string | null
      }) {
        const base = baseKey(principal.organization_slug, input.name)
        const manual = values.kind === "manual"
        const checkClass: CheckClass = manual ? "standard" : urlCheckClass
        for (let attempt = 0; attempt < keyAttempts; attempt++) {
          const taken = yield* sql`
              SELECT key FROM sources WHERE key = ${base} OR key LIKE ${`${base}-%`}`.pipe(Effect.flatMap(sourcesKeyRows))
          const key = freeKey(base, new Set(taken.map((r) => r.key)))
          const [inserted] = yield* sql`
              INSERT INTO sources (organization_id, key, name, description, kind, provider_type, status, status_page_url, poll_url,
                check_class, poll_interval_s, last_changed_at)
              VALUES (${principal.organization_id}::uuid, ${key}, ${input.name}, ${input.description ?? ""}, ${values.kind},
                ${values.provider}, ${manual ? input.status ?? "operational" : "operational"}, ${values.url}, ${values.pollUrl},
                ${checkClass}, ${checkClassIntervalSeconds[checkClass]}, ${manual ? sql`now()` : sql`NULL`})
              ON CONFLICT (key) DO NOTHING
              RETURNING id`.pipe(Effect.flatMap(sourcesIdRows))
          if (inserted !== undefined) return (yield* selectOne(principal.organization_id, key, false))!
        }
        return yield* Effect.die(new Error(`no free source key for ${base} after ${keyAttempts} attempts`))
      })

      const create = Effect.fn("CustomSources.create")(function*(principal: Principal, input: CustomSourceCreate) {
        yield* requirePermission(principal, "content.write")
        const mode = yield* modeOf(input)
        // Refuse an eleventh source before detection fetches anything; checked again where it counts, below.
        yield* ensureWithinLimit(principal.organization_id, "max_custom_sources")
        // Detection and DNS lookups run outside the transaction: no lock is held while waiting on the network.
        const found = mode.url === null ? { provider: null, pollUrl: null } : yield* provider(input, mode.url)
        const record = yield* sql.withTransaction(Effect.gen(function*() {
          yield* ensureWithinLimit(principal.organization_id, "max_custom_sources")
          const record = toCustomSource(yield* insert(principal, input, { kind: mode.kind, url: mode.url, ...found }))
          yield* recordAudit(principal, {
            action: "custom_source.created",
            entity_type: "custom_source",
            entity_id: record.id,
            after: encodeRecord(record)
          })
          return record
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        yield* reload(record.key)
        return record
      })

      const update = Effect.fn("CustomSources.update")(function*(principal: Principal, key: string, patch: CustomSourcePatch) {
        yield* requirePermission(principal, "content.write")
        if (!isSourceKey(key)) return yield* notFound(key)
        const record = yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* selectOne(principal.organization_id, key, true)
          if (before === undefined) return yield* notFound(key)
          if (patch.status !== undefined && before.kind !== "manual") {
            return yield* new InvalidParameter({
              field: "status",
              message: "status is set only on manual sources; this source's status is read from its status page"
            })
          }
          // A manual status change is the user's report: it moves last_changed_at as a polled change would.
          yield* sql`
            UPDATE sources SET name = ${patch.name ?? before.name}, description = ${patch.description ?? before.description},
              status = ${patch.status ?? before.status},
              last_changed_at = CASE WHEN status <> ${patch.status ?? before.status} THEN now() ELSE last_changed_at END,
              updated_at = now()
            WHERE id = ${before.id}::uuid`
          const record = toCustomSource((yield* selectOne(principal.organization_id, key, false))!)
          yield* recordAudit(principal, {
            action: "custom_source.updated",
            entity_type: "custom_source",
            entity_id: record.id,
            before: encodeRecord(toCustomSource(before)),
            after: encodeRecord(record)
          })
          return { record, before }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        // A status set on a manual source is published as a polled change is: state, delta, events (and so alerts).
        if (record.before.kind === "manual") {
          yield* publishManualChange({ key, name: record.record.name }, record.before.status, record.record.status, new Date()).pipe(
            Effect.provideService(Publisher, publisher)
          )
        }
        yield* reload(key)
        return record.record
      })

      const remove = Effect.fn("CustomSources.remove")(function*(principal: Principal, key: string) {
        yield* requirePermission(principal, "content.delete")
        if (!isSourceKey(key)) return yield* notFound(key)
        yield* sql.withTransaction(Effect.gen(function*() {
          const before = yield* selectOne(principal.organization_id, key, true)
          if (before === undefined) return yield* notFound(key)
          // Components, incidents and stack items of the source go with it (ON DELETE CASCADE).
          yield* sql`DELETE FROM sources WHERE id = ${before.id}::uuid`
          yield* recordAudit(principal, {
            action: "custom_source.deleted",
            entity_type: "custom_source",
            entity_id: before.id,
            before: encodeRecord(toCustomSource(before))
          })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        yield* reload(key)
      })

      // The audit log, limits and paging run on this layer's connection (and so inside its transactions).
      const onSql = <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Effect.provideService(effect, SqlClient, sql)
      return CustomSources.of({
        list: (principal, page) => onSql(list(principal, page)),
        get,
        create: (principal, input) => onSql(create(principal, input)),
        update: (principal, key, patch) => onSql(update(principal, key, patch)),
        remove: (principal, key) => onSql(remove(principal, key))
      })
    })
  )
}
