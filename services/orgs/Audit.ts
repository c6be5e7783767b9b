import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Principal } from "../domain/Principal.ts"

export interface AuditEntry {
  /** `<entity>.<verb>`, e.g. `stack.created`, `api_key.revoked` */
  readonly action: string
  readonly entity_type: string
  readonly entity_id: string | null
  readonly before?: unknown
  readonly after?: unknown
}

/** Fields never written to the audit log, whatever record they appear in. */
// (Not "key": a source's key is its public identifier; API keys are never put in an entry.)
const secretFields = new Set(["auth", "auth_secret", "secrets", "password", "password_hash", "token", "key_hash", "token_hash"])

const redact = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(redact)
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, secretFields.has(k) ? "[redacted]" : redact(v)]))
}

/** Who made a change, as the audit log stores it: at most one of user, API key and operator (none: the service itself). */
interface Actor {
  readonly organization_id: string
  readonly user: string | null
  readonly api_key: string | null
  readonly operator: string | null
  readonly ip: string | null
}

const insertAudit = Effect.fn("Audit.insertAudit")(function*(actor: Actor, entry: AuditEntry) {
  const sql = yield* SqlClient
  const before = entry.before === undefined ? null : JSON.stringify(redact(entry.before))
  const after = entry.after === undefined ? null : JSON.stringify(redact(entry.after))
  yield* sql`
      INSERT INTO audit_log (organization_id, actor_user_id, actor_api_key_id, actor_operator, action, entity_type, entity_id, before, after, ip)
      VALUES (${actor.organization_id}::uuid, ${actor.user}::uuid, ${actor.api_key}::uuid, ${actor.operator},
        ${entry.action}, ${entry.entity_type}, ${entry.entity_id}, ${before}::jsonb, ${after}::jsonb, ${actor.ip}::inet)`
}, Effect.orDie)

/**
 * Records one change in the audit log, on the caller's connection: called
 * inside the change's transaction, so the entry exists if and only if the
 * change does.
 */
export const recordAudit = (principal: Principal, entry: AuditEntry) =>
  insertAudit({
    organization_id: principal.organization_id,
    user: principal.actor.kind === "user" ? principal.actor.id : null,
    api_key: principal.actor.kind === "api_key" ? principal.actor.id : null,
    operator: null,
    ip: principal.ip
  }, entry)

/** Records a change the installation's operator made (`operator`: who ran the command), as `recordAudit`. */
export const recordOperatorAudit = (organizationId: string, operator: string, entry: AuditEntry) =>
  insertAudit({ organization_id: organizationId, user: null, api_key: null, operator, ip: null }, entry)
