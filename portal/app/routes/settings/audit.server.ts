import type { AuditEntry } from "#services/domain/api/Organization.ts"
import { ApiKeys } from "#services/orgs/ApiKeys.ts"
import { Members } from "#services/orgs/Members.ts"
import { type AuditFilter, Organizations } from "#services/orgs/Organizations.ts"
import type { Principal } from "#services/domain/Principal.ts"
import { Effect, Schema } from "effect"
import { recordTypes } from "../../components/settings/recordTypes.ts"
import { decodeForm, type FieldErrors } from "../../lib/forms.server.ts"

const day = Schema.String.check(
  Schema.makeFilter((s: string) => s === "" || (/^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`))), {
    message: "must be a date (YYYY-MM-DD)"
  })
)

/** The filter's query string (`actor`, `type`, `from`, `to`: days, both included). */
const FilterQuery = Schema.Struct({
  actor: Schema.String.check(Schema.isMaxLength(200, { message: "must be at most 200 characters" })),
  type: Schema.Literals(["", ...recordTypes]).annotate({ message: "must be one of the record types listed" }),
  from: day,
  to: day
})

export type FilterValues = Readonly<Record<"actor" | "type" | "from" | "to", string>>

const nextDay = (d: string) => new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString()

/** The URL's filter: the service's `AuditFilter`, or each field's message. */
export const auditFilterOf = (url: URL): { readonly values: FilterValues; readonly filter?: AuditFilter; readonly errors: FieldErrors } => {
  const values = { actor: "", type: "", from: "", to: "", ...Object.fromEntries(["actor", "type", "from", "to"].map((k) => [k, url.searchParams.get(k) ?? ""]).filter(([, v]) => v !== "")) } as FilterValues
  const decoded = decodeForm(FilterQuery, values)
  if (!decoded.ok) return { values, errors: decoded.errors }
  const v = decoded.value
  if (v.from !== "" && v.to !== "" && v.from > v.to) return { values, errors: { to: "must not be before the start date" } }
  return {
    values,
    errors: {},
    filter: {
      actor: v.actor === "" ? undefined : v.actor,
      entity_type: v.type === "" ? undefined : v.type,
      since: v.from === "" ? undefined : `${v.from}T00:00:00.000Z`,
      until: v.to === "" ? undefined : nextDay(v.to)
    }
  }
}

/** Who can appear as an actor: the members and the API keys, by id, with the words to show. */
export const actorsOf = (principal: Principal) =>
  Effect.gen(function*() {
    const members = (yield* Members.use((m) => m.list(principal, { limit: 500 }))).data
    const keys = (yield* ApiKeys.use((k) => k.list(principal, { limit: 500 }))).data
    return [
      ...members.map((m) => ({ id: m.user_id, label: `${m.name} <${m.email}>` })),
      ...keys.map((k) => ({ id: k.id, label: `API key ${k.name} (${k.prefix}…)` }))
    ]
  })

export const actorLabel = (entry: AuditEntry, actors: ReadonlyArray<{ readonly id: string; readonly label: string }>): string =>
  entry.actor.kind === "system"
    ? "statusgrid"
    : entry.actor.kind === "operator"
    ? `Operator ${entry.actor.id ?? ""}`
    : actors.find((a) => a.id === entry.actor.id)?.label ?? `${entry.actor.kind === "user" ? "Former member" : "API key"} ${entry.actor.id ?? ""}`

/** Every entry matching the filter, page after page (the export), at most `max`. */
export const allEntries = (principal: Principal, filter: AuditFilter, max = 50_000) =>
  Effect.gen(function*() {
    const organizations = yield* Organizations
    const out: Array<AuditEntry> = []
    let cursor: string | undefined
    do {
      const page = yield* organizations.auditLog(principal, { limit: 500, cursor }, filter)
      out.push(...page.data)
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined && out.length < max)
    return out
  })

/** One CSV field (RFC 4180): quoted when it holds a comma, quote or line break, quotes doubled. */
export const csvField = (value: string): string => (/[",\r\n]/.test(value) ? `"${value.replaceAll("\"", "\"\"")}"` : value)

export const csvRow = (values: ReadonlyArray<string>): string => `${values.map(csvField).join(",")}\r\n`

export const json = (value: unknown): string => (value === null || value === undefined ? "" : JSON.stringify(value))
