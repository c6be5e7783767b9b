import { createRequire } from "node:module"

/**
 * Reading a `/metrics` answer with a real Prometheus text-format parser (parse-prometheus-text-format,
 * a CommonJS package without types): the soak benchmark and the metrics tests.
 */
const parsePrometheusTextFormat = createRequire(import.meta.url)("parse-prometheus-text-format") as (text: string) => unknown

/** One metric family as parse-prometheus-text-format gives it (prom2json's shape). */
export interface Family {
  readonly name: string
  readonly help: string
  readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
  readonly metrics: ReadonlyArray<{
    readonly labels?: Record<string, string>
    readonly value?: string
    readonly buckets?: Record<string, string>
    readonly count?: string
    readonly sum?: string
  }>
}

/**
 * A scrape, parsed by a real Prometheus text-format parser: the families by name (with their types),
 * and each histogram's `_bucket` and `_count` series with their labels. The parser folds a
 * histogram's labelled series into one (it keeps only unlabelled histograms' figures), so the
 * histograms are parsed a second time without their `# TYPE` lines: then `name_count{…}` and
 * `name_bucket{…,le}` are families of their own, with their labels.
 */
export interface Scrape {
  readonly families: ReadonlyMap<string, Family>
  readonly histogramCounts: ReadonlyMap<string, Family["metrics"]>
  readonly histogramBuckets: ReadonlyMap<string, Family["metrics"]>
  has(name: string): boolean
  get(name: string): Family | undefined
}

export const parseMetrics = (text: string): Scrape => {
  const families = new Map((parsePrometheusTextFormat(text) as Array<Family>).map((family) => [family.name, family]))
  const untyped = text.split("\n").filter((line) => !/^# TYPE \S+ histogram$/u.test(line)).join("\n")
  const histogramCounts = new Map<string, Array<Family["metrics"][number]>>()
  const histogramBuckets = new Map<string, Array<Family["metrics"][number]>>()
  for (const family of parsePrometheusTextFormat(untyped) as Array<Family>) {
    for (const [suffix, into] of [["_count", histogramCounts], ["_bucket", histogramBuckets]] as const) {
      if (!family.name.endsWith(suffix)) continue
      const name = family.name.slice(0, -suffix.length)
      if (families.get(name)?.type !== "HISTOGRAM") continue
      into.set(name, [...(into.get(name) ?? []), ...family.metrics])
    }
  }
  return { families, histogramCounts, histogramBuckets, has: (name) => families.has(name), get: (name) => families.get(name) }
}

/** Scrapes `url` (a /metrics address) and parses it. */
export const scrape = async (url: string, init?: RequestInit): Promise<Scrape> => {
  const response = await fetch(url, init)
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`)
  return parseMetrics(await response.text())
}

const matches = (labels: Record<string, string> | undefined, wanted: Record<string, string>) =>
  Object.entries(wanted).every(([name, value]) => labels?.[name] === value)

/** The sum of a counter's or gauge's series whose labels include `labels` (0 when none). */
export const valueOf = (scraped: Scrape, name: string, labels: Record<string, string> = {}): number =>
  (scraped.get(name)?.metrics ?? []).filter((m) => matches(m.labels, labels)).reduce((sum, m) => sum + Number(m.value ?? 0), 0)

/** `valueOf`, or null when the family is not in the scrape at all. */
export const valueOrNull = (scraped: Scrape, name: string, labels: Record<string, string> = {}): number | null =>
  scraped.has(name) ? valueOf(scraped, name, labels) : null

/** The sums of a family's series by one label; null when the family is absent. */
export const byLabel = (scraped: Scrape, name: string, label: string): Record<string, number> | null => {
  const family = scraped.get(name)
  if (family === undefined) return null
  const sums: Record<string, number> = {}
  for (const m of family.metrics) {
    const key = m.labels?.[label] ?? ""
    sums[key] = (sums[key] ?? 0) + Number(m.value ?? 0)
  }
  return sums
}

/** A histogram's cumulative bucket counts (upper bound → count) summed over its series whose labels include `labels`; null when absent. */
export const bucketsOf = (scraped: Scrape, name: string, labels: Record<string, string> = {}): Map<number, number> | null => {
  const series = scraped.histogramBuckets.get(name)
  if (series === undefined) return null
  const sums = new Map<number, number>()
  for (const m of series) {
    if (!matches(m.labels, labels)) continue
    const le = m.labels?.["le"] ?? "+Inf"
    const bound = le === "+Inf" ? Infinity : Number(le)
    sums.set(bound, (sums.get(bound) ?? 0) + Number(m.value ?? 0))
  }
  return sums
}

/** The number of observations of a histogram's series whose labels include `labels`. */
export const countOf = (scraped: Scrape, name: string, labels: Record<string, string> = {}): number =>
  (scraped.histogramCounts.get(name) ?? []).filter((m) => matches(m.labels, labels)).reduce((sum, m) => sum + Number(m.value ?? 0), 0)
