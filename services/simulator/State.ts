import { Schema } from "effect"
import { MaintenanceStatus } from "../domain/Snapshot.ts"
import { ComponentStatus, IncidentImpact, IncidentStatus } from "../domain/Status.ts"
import type { SyntheticSpec } from "../catalog/Synthetic.ts"
import { generateSource } from "./generate.ts"
import type { SimIncident, SimMaintenance, SimSource } from "./Model.ts"
import { rendererFor } from "./renderers/index.ts"

export class SimulatorError extends Schema.TaggedError<SimulatorError>()("SimulatorError", {
  status: Schema.Number,
  message: Schema.String
}) {}

/** Bodies of the control API, validated with these schemas. */
export const ComponentUpdate = Schema.Struct({ status: ComponentStatus })
export const IncidentCreate = Schema.Struct({
  title: Schema.NonEmptyString,
  impact: IncidentImpact,
  status: Schema.optional(IncidentStatus),
  body: Schema.optional(Schema.String),
  components: Schema.optional(Schema.Array(Schema.String)),
  /** sets the affected components to this status at the same time */
  component_status: Schema.optional(ComponentStatus),
  region: Schema.optional(Schema.NullOr(Schema.String))
})
export const IncidentUpdate = Schema.Struct({
  status: IncidentStatus,
  body: Schema.optional(Schema.String),
  impact: Schema.optional(IncidentImpact)
})
export const IncidentResolve = Schema.Struct({ body: Schema.optional(Schema.String) })
export const MaintenanceCreate = Schema.Struct({
  title: Schema.NonEmptyString,
  scheduled_for: Schema.String,
  scheduled_until: Schema.optional(Schema.NullOr(Schema.String)),
  status: Schema.optional(MaintenanceStatus),
  components: Schema.optional(Schema.Array(Schema.String))
})
export const ProviderChange = Schema.Struct({ provider: Schema.String })
export const SourceCreate = Schema.Struct({
  key: Schema.String.pipe(Schema.check(Schema.isPattern(/^[a-z0-9][a-z0-9-]{0,126}$/))),
  name: Schema.NonEmptyString,
  provider: Schema.String,
  components: Schema.optional(Schema.Number),
  groups: Schema.optional(Schema.Number),
  regions: Schema.optional(Schema.Array(Schema.String))
})

const notFound = (what: string) => new SimulatorError({ status: 404, message: `${what} not found` })

/**
 * The simulator's sources and every change the control API makes to them.
 * Each change bumps the source's version (its ETag) and Last-Modified time.
 */
export class SimulatorState {
  readonly sources = new Map<string, SimSource>()
  private counter = 0

  readonly baseUrl: string
  private readonly clock: () => Date

  constructor(baseUrl: string, clock: () => Date = () => new Date()) {
    this.baseUrl = baseUrl
    this.clock = clock
  }

  private touch(source: SimSource): SimSource {
    source.version++
    const now = this.clock()
    // Last-Modified has one-second resolution: keep it strictly increasing so If-Modified-Since sees every change.
    const next = Math.max(now.getTime(), Math.floor(source.updatedAt.getTime() / 1000) * 1000 + 1000)
    source.updatedAt = new Date(next)
    return source
  }

  private nextId(prefix: string): string {
    this.counter++
    return `${prefix}${String(this.counter).padStart(8, "0")}`
  }

  sourceUrl(key: string): string {
    return `${this.baseUrl.replace(/\/+$/, "")}/s/${key}`
  }

  addSpec(spec: SyntheticSpec): SimSource {
    return this.add({
      key: spec.key,
      name: spec.name,
      provider: spec.provider,
      components: spec.components,
      groups: spec.groups,
      regions: spec.regions
    })
  }

  add(input: typeof SourceCreate.Type): SimSource {
    if (!rendererFor(input.provider)) {
      throw new SimulatorError({ status: 400, message: `provider: unknown provider type ${JSON.stringify(input.provider)}` })
    }
    const source = generateSource({
      key: input.key,
      name: input.name,
      provider: input.provider,
      baseUrl: this.sourceUrl(input.key),
      now: this.clock(),
      ...(input.components !== undefined ? { components: input.components } : {}),
      ...(input.groups !== undefined ? { groups: input.groups } : {}),
      ...(input.regions !== undefined ? { regions: input.regions } : {})
    })
    this.sources.set(source.key, source)
    return source
  }

  get(key: string): SimSource {
    const source = this.sources.get(key)
    if (!source) throw notFound(`source ${key}`)
    return source
  }

  setComponent(key: string, componentId: string, update: typeof ComponentUpdate.Type): SimSource {
    const source = this.get(key)
    const component = source.components.find((c) => c.id === componentId)
    if (!component) throw notFound(`component ${componentId} of ${key}`)
    component.status = update.status
    return this.touch(source)
  }

  openIncident(key: string, input: typeof IncidentCreate.Type): SimIncident {
    const source = this.get(key)
    const components = [...(input.components ?? [])]
    for (const id of components) {
      if (!source.components.some((c) => c.id === id)) throw notFound(`component ${id} of ${key}`)
    }
    const now = this.clock()
    const status = input.status ?? "investigating"
    const incident: SimIncident = {
      id: this.nextId("inc"),
      title: input.title,
      status,
      impact: input.impact,
      created_at: now,
      updated_at: now,
      resolved_at: null,
      updates: [{ id: this.nextId("upd"), status, body: input.body ?? `We are investigating: ${input.title}`, created_at: now }],
      components,
      region: input.region ?? source.components.find((c) => components.includes(c.id))?.region ?? null
    }
    if (input.component_status) {
      for (const c of source.components) if (components.includes(c.id)) c.status = input.component_status
    }
    source.incidents.push(incident)
    this.touch(source)
    return incident
  }

  private incident(source: SimSource, id: string): SimIncident {
    const incident = source.incidents.find((i) => i.id === id)
    if (!incident) throw notFound(`incident ${id} of ${source.key}`)
    return incident
  }

  updateIncident(key: string, id: string, input: typeof IncidentUpdate.Type): SimIncident {
    const source = this.get(key)
    const incident = this.incident(source, id)
    const now = this.clock()
    incident.status = input.status
    if (input.impact) incident.impact = input.impact
    incident.updated_at = now
    if (input.status === "resolved" && incident.resolved_at === null) incident.resolved_at = now
    incident.updates.push({ id: this.nextId("upd"), status: input.status, body: input.body ?? "", created_at: now })
    this.touch(source)
    return incident
  }

  /** Resolves the incident and sets its components back to operational, as status page operators do. */
  resolveIncident(key: string, id: string, input: typeof IncidentResolve.Type): SimIncident {
    const source = this.get(key)
    const incident = this.updateIncident(key, id, { status: "resolved", body: input.body ?? "This incident has been resolved." })
    for (const c of source.components) if (incident.components.includes(c.id)) c.status = "operational"
    return incident
  }

  scheduleMaintenance(key: string, input: typeof MaintenanceCreate.Type): SimMaintenance {
    const source = this.get(key)
    const from = new Date(input.scheduled_for)
    const until = input.scheduled_until ? new Date(input.scheduled_until) : null
    if (Number.isNaN(from.getTime()) || (until !== null && Number.isNaN(until.getTime()))) {
      throw new SimulatorError({ status: 400, message: "scheduled_for: expected ISO 8601 timestamps" })
    }
    const now = this.clock()
    const maintenance: SimMaintenance = {
      id: this.nextId("mnt"),
      title: input.title,
      status: input.status ?? (from <= now ? "in_progress" : "scheduled"),
      scheduled_for: from,
      scheduled_until: until,
      components: [...(input.components ?? [])],
      created_at: now,
      updated_at: now
    }
    source.maintenances.push(maintenance)
    this.touch(source)
    return maintenance
  }

  setProvider(key: string, input: typeof ProviderChange.Type): SimSource {
    if (!rendererFor(input.provider)) {
      throw new SimulatorError({ status: 400, message: `provider: unknown provider type ${JSON.stringify(input.provider)}` })
    }
    const source = this.get(key)
    source.provider = input.provider
    return this.touch(source)
  }
}
