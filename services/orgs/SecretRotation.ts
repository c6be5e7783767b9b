import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { rowsOf } from "../platform/Rows.ts"
import { SecretBox, secretBinding, type SecretPurpose } from "../platform/SecretBox.ts"

/** A column that holds sealed values: where its rows are, and what each value is bound to (services/platform/SecretBox.ts). */
interface SealedColumn {
  readonly table: string
  readonly purpose: SecretPurpose
  /** The rows, aliased `t`, joined to what names their organization. */
  readonly from: string
  /** The row's id (the binding's record), over `t`. */
  readonly key: string
  readonly organization: string
  readonly column: string
}

/** Every column of PostgreSQL that holds sealed values. A new one is added here, or rotation leaves it under the old key. */
export const sealedColumns: ReadonlyArray<SealedColumn> = [
  { table: "channels", purpose: "channel secrets", from: "channels t", key: "id", organization: "t.organization_id", column: "secrets" },
  { table: "monitors", purpose: "monitor auth", from: "monitors t", key: "id", organization: "t.organization_id", column: "auth_secret" },
  {
    table: "invitation_mails",
    purpose: "invitation mail",
    from: "invitation_mails t JOIN invitations i ON i.id = t.invitation_id",
    key: "invitation_id",
    organization: "i.organization_id",
    column: "sealed"
  }
]

const decodeSealed = rowsOf("sealed values", Schema.Struct({ id: Schema.String, organization_id: Schema.String, sealed: Schema.Uint8Array }))

/** What rotation did to one table's sealed values. */
export interface RotationCounts {
  /** Sealed again under the current key, format 2 (they were format 1, or under the previous key). */
  resealed: number
  /** Already format 2 under the current key (and they open for their row): left as they are. */
  current: number
  /** Opened under no configured key, or not for their row: left as they are, and listed. */
  unreadable: number
}

export interface RotationReport {
  /** The current key's id, which every readable value is now sealed under. */
  readonly key_id: string
  readonly tables: Record<string, RotationCounts>
  /** The first `unreadableListed` unreadable values (table, row id, why). */
  readonly unreadable: ReadonlyArray<{ readonly table: string; readonly id: string; readonly error: string }>
}

/** How many unreadable values the report names (the counts have them all). */
export const unreadableListed = 100

/**
 * `statusgrid secrets rotate`: every sealed value of PostgreSQL opened (under
 * `SECRETS_KEY` or `SECRETS_KEY_PREVIOUS`, format 1 or 2) and sealed again
 * under the current key in format 2 with its row's binding, unless it already
 * is. Table by table, in batches of `batch` rows by id, each batch in one
 * transaction with its rows locked (a concurrent edit waits, and is not
 * overwritten). Running it again re-seals nothing: idempotent. A value that
 * opens under no configured key is counted and listed, not a stop.
 */
export const rotateSecrets = Effect.fn("SecretRotation.rotateSecrets")(function*(options: { readonly batch: number }) {
  const sql = yield* SqlClient
  const box = yield* SecretBox
  const batch = Math.max(1, Math.floor(options.batch))
  const tables: Record<string, RotationCounts> = {}
  const unreadable: Array<{ table: string; id: string; error: string }> = []
  for (const column of sealedColumns) {
    const counts: RotationCounts = { resealed: 0, current: 0, unreadable: 0 }
    tables[column.table] = counts
    let after: string | undefined
    for (;;) {
      const last = yield* sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql`
          SELECT t.${sql.literal(column.key)} AS id, ${sql.literal(column.organization)} AS organization_id, t.${sql.literal(column.column)} AS sealed
          FROM ${sql.literal(column.from)}
          WHERE t.${sql.literal(column.column)} IS NOT NULL ${after === undefined ? sql`` : sql`AND t.${sql.literal(column.key)} > ${after}::uuid`}
          ORDER BY t.${sql.literal(column.key)} LIMIT ${batch}
          FOR UPDATE OF t`.pipe(Effect.flatMap(decodeSealed))
        const ids: Array<string> = []
        const values: Array<string> = []
        for (const row of rows) {
          const resealed = yield* Effect.result(box.reseal(row.sealed, secretBinding(column.purpose, row.organization_id, row.id)))
          if (resealed._tag === "Failure") {
            counts.unreadable++
            if (unreadable.length < unreadableListed) unreadable.push({ table: column.table, id: row.id, error: resealed.failure.message })
          } else if (resealed.success.changed) {
            counts.resealed++
            ids.push(row.id)
            values.push(Buffer.from(resealed.success.sealed).toString("hex"))
          } else {
            counts.current++
          }
        }
        if (ids.length > 0) {
          yield* sql`
            UPDATE ${sql.literal(column.table)} AS t SET ${sql.literal(column.column)} = decode(v.sealed, 'hex')
            FROM unnest(${ids}::uuid[], ${values}::text[]) AS v(id, sealed)
            WHERE t.${sql.literal(column.key)} = v.id`
        }
        return rows.length < batch ? undefined : rows[rows.length - 1]!.id
      }))
      if (last === undefined) break
      after = last
    }
  }
  return { key_id: box.keyId, tables, unreadable } satisfies RotationReport
})
