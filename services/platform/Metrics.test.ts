import { Metric } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import * as Metrics from "./Metrics.ts"

const infra = Path.resolve(import.meta.dirname, "..", "..", "infra", "observability")
const families = Object.values(Metrics).flatMap((value) => (Metric.isMetric(value) ? [value.id] : []))

describe("the metrics' documentation and dashboard", () => {
  it("every family is documented in infra/observability/README.md", () => {
    const readme = Fs.readFileSync(Path.join(infra, "README.md"), "utf8")
    expect(families.length).toBeGreaterThan(25)
    expect(families.filter((name) => !readme.includes(`\`${name}\``))).toEqual([])
  })

  it("the Grafana dashboard asks only for families that exist, and shows each of them", () => {
    const dashboard = JSON.parse(Fs.readFileSync(Path.join(infra, "grafana-dashboard.json"), "utf8")) as {
      panels: Array<{ targets?: Array<{ expr: string }> }>
    }
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr)
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:statusgrid|process|nodejs)_[a-z_]+?)(?:_bucket|_sum|_count)?\b(?=[{[\s)]|$)/gu)].map((m) => m[1]!)))
    expect([...used].filter((name) => !families.includes(name))).toEqual([])
    expect(families.filter((name) => !used.has(name))).toEqual([])
  })
})
