import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"

export interface Violation {
  /** SqlError reason tag, e.g. UniqueViolation or ConstraintError. */
  readonly reason: string
  /** SQLSTATE, e.g. 23505 unique, 23514 check, 23503 foreign key. */
  readonly code: string | undefined
  /** Name of the violated constraint or index, when the server reports one. */
  readonly constraint: string | undefined
}

const field = (cause: unknown, name: string): string | undefined => {
  let current: unknown = cause
  for (let depth = 0; depth < 4 && current !== null && typeof current === "object"; depth++) {
    const record = current as Record<string, unknown>
    const fields = record["fields"] as Record<string, unknown> | undefined
    const value = record[name] ?? fields?.[name]
    if (typeof value === "string") return value
    current = record["cause"]
  }
  return undefined
}

/** Runs a statement expected to be refused and describes how it was refused; dies if it succeeds. */
export const expectViolation = <A, R>(statement: Effect.Effect<A, SqlError, R>): Effect.Effect<Violation, never, R> =>
  Effect.flatMap(Effect.result(statement), (result) => {
    if (result._tag === "Success") {
      return Effect.die(new Error("the statement succeeded but a constraint violation was expected"))
    }
    const reason = result.failure.reason
    return Effect.succeed({
      reason: reason._tag,
      code: field(reason.cause, "code"),
      constraint: ("constraint" in reason ? reason.constraint : undefined) ?? field(reason.cause, "constraint")
    })
  })
