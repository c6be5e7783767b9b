// @ts-expect-error the parser ships no types; its output is described by `Family` below.
import parsePrometheusTextFormat from "parse-prometheus-text-format"

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
 * and each histogram's `_count` series by labels. The parser folds a histogram's labelled series into
 * one (it keeps only unlabelled histograms' counts), so the histograms are parsed a second time
 * without their `# TYPE` lines: then `name_count{…}` is a family of its own, with its labels.
 */
export interface Scrape {
  readonly families: ReadonlyMap<string, Family>
  readonly histogramCounts: ReadonlyMap<string, Family["metrics"]>
  has(name: string): boolean
  get(name: string): Family | undefined
}

export const parseMetrics = (text: string): Scrape => {
  const families = new Map((parsePrometheusTextFormat(text) as Array<Family>).map((family) => [family.name, family]))
  const untyped = text.split("\n").filter((line) => !/^# TYPE \S+ histogram$/u.test(line)).join("\n")
  const histogramCounts = new Map<string, Array<Family["metrics"][number]>>()
  for (const family of parsePrometheusTextFormat(untyped) as Array<Family>) {
    if (!family.name.endsWith("_count")) continue
    const name = family.name.slice(0, -"_count".length)
    if (families.get(name)?.type !== "HISTOGRAM") continue
    histogramCounts.set(name, [...(histogramCounts.get(name) ?? []), ...family.metrics])
  }
  return { families, histogramCounts, has: (name) => families.has(name), get: (name) => families.get(name) }
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

/** The number of observations of a histogram's series whose labels include `labels`. */
export const countOf = (scraped: Scrape, name: string, labels: Record<string, string> = {}): number =>
  (scraped.histogramCounts.get(name) ?? []).filter((m) => matches(m.labels, labels)).reduce((sum, m) => sum + Number(m.value ?? 0), 0)
