import type { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"

/** A work table's claim: the parts in which the outbox, the invitation mails and the reports differ. */
export interface ClaimOptions {
  /** The table, with `status`, `attempts` and `next_attempt_at` columns, and the alias its rows go by. */
  readonly table: string
  readonly alias: string
  /** The column naming a row. */
  readonly key: string
  readonly limit: number
  readonly leaseMs: number
  /** The column the due rows are taken in the order of. */
  readonly orderBy: string
  /** Another condition a due row must meet (`AND …`, over the alias). */
  readonly alsoDue?: Fragment
  /** Tables the claimed rows are joined to (`, channels c`) and the join's conditions (`AND …`). */
  readonly join?: Fragment
  readonly joinOn?: Fragment
  /** What the claim returns of each row (and of the joined tables). */
  readonly returning: Fragment
}

/**
 * The one way a worker claims due rows of a work table: the first `limit` due
 * ones (`pending` or `sending`, `next_attempt_at` passed), locked with SKIP
 * LOCKED so that any number of processes share them, each marked `sending`
 * with one more attempt and leased for `leaseMs`: a row its sender has not
 * settled by then (the process died) is due again. The caller settles each row
 * it got (sent, retried later, failed).
 */
export const claimDue = (sql: SqlClient, o: ClaimOptions) => {
  const alias = sql(o.alias)
  const key = sql(o.key)
  return sql`
    WITH due AS (
      SELECT ${key} FROM ${sql(o.table)} ${alias}
      WHERE status IN ('pending', 'sending') AND next_attempt_at <= now() ${o.alsoDue ?? sql``}
      ORDER BY ${sql(o.orderBy)} LIMIT ${o.limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE ${sql(o.table)} AS ${alias}
    SET status = 'sending', attempts = ${alias}.attempts + 1, next_attempt_at = now() + ${`${o.leaseMs} milliseconds`}::interval
    FROM due${o.join ?? sql``}
    WHERE ${alias}.${key} = due.${key} ${o.joinOn ?? sql``}
    RETURNING ${o.returning}`
}
