import { Effect, Schema } from "effect"
import type { Snapshot, SnapshotComponent } from "../../domain/Snapshot.ts"
import type { ComponentStatus, SourceStatus } from "../../domain/Status.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { componentToSource, effectiveStatus, lookup, rollUpGroups, worstComponent, worstSource } from "../normalize.ts"
import { decodeText, looksLikeHtml } from "../text.ts"

/**
 * A service's own health endpoint. A recognised JSON body (RFC draft
 * `application/health+json`, Spring Boot Actuator, `{healthy}`, `{ok}`) is
 * read for its verdict and checks; anything else is plain HTTP. An HTTP error
 * is data here (the service is down), never an AdapterError.
 */

// Lower-cased; green/yellow/red are Elasticsearch's. "unknown" is the endpoint saying it cannot
// tell, so it adds nothing (README status rules).
const healthStatuses: Record<string, ComponentStatus> = {
  pass: "operational",
  ok: "operational",
  up: "operational",
  healthy: "operational",
  success: "operational",
  green: "operational",
  unknown: "operational",
  warn: "degraded",
  warning: "degraded",
  degraded: "degraded",
  yellow: "degraded",
  fail: "critical",
  red: "critical",
  down: "critical",
  error: "critical",
  out_of_service: "critical",
  unhealthy: "critical"
}

const StatusVerdict = Schema.Struct({ status: Schema.String })
const HealthyVerdict = Schema.Struct({ healthy: Schema.Boolean })
const OkVerdict = Schema.Struct({ ok: Schema.Boolean })
const isStatusVerdict = Schema.is(StatusVerdict)
const isHealthyVerdict = Schema.is(HealthyVerdict)
const isOkVerdict = Schema.is(OkVerdict)

/** Named sub-checks: RFC `checks` (arrays of results), Spring `components` (nested objects). */
const Checks = Schema.Record(Schema.String, Schema.Unknown)
const isChecks = Schema.is(Checks)
/** A Spring component (or any object with a status); a composite nests more under `components`. */
const isCheck = Schema.is(Schema.Struct({ status: Schema.String, components: Schema.optional(Checks) }))
/** RFC draft: one check name, results per instance. */
const isCheckResults = Schema.is(Schema.Array(Schema.Struct({ status: Schema.String })))

interface Verdict {
  /** What the body said, for the description, e.g. "status: fail". */
  readonly said: string
  readonly status: ComponentStatus
}

const verdictOf = (body: unknown, warnings: Array<string>): Verdict | null => {
  if (isStatusVerdict(body)) {
    const status = lookup<ComponentStatus>(healthStatuses, body.status.toLowerCase(), "degraded", warnings, "health status")
    return { said: `status: ${body.status}`, status }
  }
  if (isHealthyVerdict(body)) return { said: `healthy: ${body.healthy}`, status: body.healthy ? "operational" : "critical" }
  if (isOkVerdict(body)) return { said: `ok: ${body.ok}`, status: body.ok ? "operational" : "critical" }
  return null
}

/** Checks nested deeper are left out (Spring composites nest two or three levels): a body may nest thousands. */
const maxCheckDepth = 16

const checkComponents = (
  checks: Readonly<Record<string, unknown>>,
  parentId: string | null,
  warnings: Array<string>,
  into: Array<SnapshotComponent>,
  depth = 1
): void => {
  if (depth > maxCheckDepth) {
    warnings.push(`checks nested deeper than ${maxCheckDepth} levels under ${JSON.stringify(parentId)} ignored`)
    return
  }
  for (const [name, value] of Object.entries(checks)) {
    const id = parentId === null ? name : `${parentId}/${name}`
    const statuses = isCheckResults(value) ? value.map((r) => r.status) : isCheck(value) ? [value.status] : null
    if (statuses === null || statuses.length === 0) continue
    const nested = isCheck(value) ? value.components : undefined
    into.push({
      id,
      name,
      description: "",
      status: worstComponent(statuses.map((s) => lookup<ComponentStatus>(healthStatuses, s.toLowerCase(), "degraded", warnings, "check status"))),
      parent_id: parentId,
      is_group: nested !== undefined,
      position: into.length,
      region: null
    })
    if (nested !== undefined) checkComponents(nested, id, warnings, into, depth + 1)
  }
}

const componentsOf = (body: unknown, warnings: Array<string>): Array<SnapshotComponent> => {
  if (typeof body !== "object" || body === null) return []
  const into: Array<SnapshotComponent> = []
  for (const key of ["checks", "components"]) {
    const checks = (body as Record<string, unknown>)[key]
    if (isChecks(checks)) checkComponents(checks, null, warnings, into)
  }
  return rollUpGroups(into)
}

/** Plain HTTP semantics: rate limiting and server errors are an outage, other client errors degraded. */
const httpStatus = (status: number): SourceStatus => {
  if (status >= 200 && status < 300) return "operational"
  return status === 429 || status >= 500 ? "down" : "degraded"
}

const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false }
  }
}

const descriptions: Record<SourceStatus, string> = {
  operational: "Healthy",
  degraded: "Degraded",
  down: "Down",
  maintenance: "Under maintenance"
}

const toSnapshot = (doc: Fetched, source: SourceConfig, now: Date): Snapshot => {
  const warnings: Array<string> = []
  const text = decodeText(doc.body, doc.contentType)
  const seen = [`HTTP ${doc.status}`]
  const trimmed = text.trimStart()
  const looksJson = /json/i.test(doc.contentType) || trimmed.startsWith("{") || trimmed.startsWith("[")
  const parsed = looksJson && !looksLikeHtml(text) ? parseJson(text) : null
  if (parsed?.ok === false) {
    seen.push("invalid JSON body")
    warnings.push(`the body looks like JSON but does not parse (${doc.body.length} bytes)`)
  }
  const body = parsed?.ok === true ? parsed.value : undefined
  const verdict = verdictOf(body, warnings)
  if (verdict !== null) seen.push(verdict.said)
  const components = componentsOf(body, warnings)
  const failing = components.filter((c) => !c.is_group && (c.status === "critical" || c.status === "degraded"))
  if (failing.length > 0) seen.push(`failing: ${failing.map((c) => c.name).join(", ")}`)
  const expect = source.options?.["expect"]
  const missing = expect !== undefined && expect !== "" && !text.includes(expect)
  if (missing) seen.push(`expected text ${JSON.stringify(expect)} not found`)

  // What the endpoint itself answered; a broken body or missing text is our finding, not its verdict.
  const reported = worstSource([httpStatus(doc.status), verdict === null ? "operational" : componentToSource(verdict.status)])
  const effective = effectiveStatus({ reported, components, incidents: [], maintenances: [], now })
  const status = worstSource([effective, missing || parsed?.ok === false ? "degraded" : "operational"])
  return {
    provider: "health_check",
    status,
    reported_status: reported,
    description: `${descriptions[status]} (${seen.join(", ")})`,
    components,
    incidents: [],
    maintenances: [],
    regions: [],
    warnings
  }
}

export const healthCheck = {
  id: "health_check",
  name: "Health check endpoint",
  endpoints: (source) => [source.url],
  parse: (fetched, source, now) => {
    const doc = fetched[0]
    return doc === undefined
      ? Effect.fail(new AdapterError({ provider: "health_check", url: source.url, reason: "invalid_shape", message: "nothing was fetched" }))
      : Effect.succeed(toSnapshot(doc, source, now))
  },
  // The last resort of detection: detect.ts falls back to it when nothing else matches.
  detect: {}
} as const satisfies Adapter
