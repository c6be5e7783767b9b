import type { ComponentStatus, IncidentImpact } from "../../domain/Status.ts"
import { escapeXml, htmlPage, type Renderer, type SimSource } from "../Model.ts"

/**
 * A health endpoint in the RFC draft's `application/health+json` shape at the
 * source URL itself: the overall verdict and one check per leaf component. A
 * Renderer always answers 200, so the HTTP status a real endpoint would add
 * (503 on fail) is not expressed.
 */

type Verdict = "pass" | "warn" | "fail"
const rank: Record<Verdict, number> = { pass: 0, warn: 1, fail: 2 }

// The RFC has no maintenance state: a component under maintenance is not fully available.
const componentVerdicts: Record<ComponentStatus, Verdict> = {
  operational: "pass",
  degraded: "warn",
  critical: "fail",
  maintenance: "warn"
}

const impactVerdicts: Record<IncidentImpact, Verdict> = {
  none: "pass",
  minor: "warn",
  major: "warn",
  critical: "fail",
  maintenance: "warn"
}

const worst = (verdicts: ReadonlyArray<Verdict>): Verdict =>
  verdicts.reduce<Verdict>((a, b) => (rank[b] > rank[a] ? b : a), "pass")

const health = (source: SimSource) => {
  const leaves = source.components.filter((c) => !c.is_group).toSorted((a, b) => a.position - b.position)
  const open = source.incidents.filter((i) => i.resolved_at === null)
  const time = source.updatedAt.toISOString()
  return {
    status: worst([...leaves.map((c) => componentVerdicts[c.status]), ...open.map((i) => impactVerdicts[i.impact])]),
    version: "1",
    releaseId: `1.0.${source.version}`,
    serviceId: source.key,
    description: `health of ${source.name}`,
    checks: Object.fromEntries(leaves.map((c) => [c.name, [{
      componentId: c.id,
      componentType: "component",
      status: componentVerdicts[c.status],
      time,
      ...(c.status === "operational" ? {} : { output: c.status === "maintenance" ? "under maintenance" : c.status })
    }]]))
  }
}

export const healthCheckRenderer: Renderer = {
  provider: "health_check",
  routes: {
    "/": (source) => ({ contentType: "application/health+json", body: JSON.stringify(health(source)) })
  },
  page: (source) => htmlPage(`${source.name} health`, "", `<p>Health of ${escapeXml(source.name)} is served as JSON at this URL.</p>`)
}
