import type { CrowdSymptom } from "../domain/api/Crowd.ts"
import { hourOfWeekOf } from "../domain/CrowdScore.ts"
import { fnv1a, prng } from "../platform/Prng.ts"

/**
 * The simulated crowd (issue #17): users' reports of trouble with a source, in
 * virtual time, for `statusgrid bench crowd` and the tests that drive the real
 * API. Pure and deterministic: the same source model, range and outages give
 * the same reports, and a range's reports are the same whether it is generated
 * whole or in pieces (each hour and each outage has its own seeded PRNG).
 *
 * - **Background**: reporters of a quiet moment arrive as a Poisson process
 *   whose rate is constant within a clock hour: `backgroundRate(hourOfWeek)`
 *   reporters per 10 minutes for an average source (busier on weekday
 *   afternoons UTC, quieter at night and at weekends), times the source's
 *   `scale`.
 * - **Outages**: the official status flips at `at`; reports start `leadMs`
 *   before it (people notice before the status page says so), rise linearly
 *   over `rampMs` to `peakPer10Min`, and stay there until the official status
 *   is back (`at + durationMs`); a few reporters report again minutes later.
 * - **Reporters and networks**: a reporter is a host in a network (a /24);
 *   most come from networks of their own (homes: any of 65,280 networks), a
 *   share `officeShare` from the source's few `offices`, networks many of its
 *   reporters share. `crowdAddress` turns one into a loopback address
 *   127.x.y.z (x.y the network, z the host), so tests and the ingest benchmark
 *   send each report from its reporter's own address.
 */

const minuteMs = 60_000
const hourMs = 3_600_000
/** The reports' window (crowdDefaults.windowMs): rates are per 10 minutes. */
const per10MinMs = 10 * minuteMs

/** Networks are 256 … 65,535: 127.1.0.0/24 … 127.255.255.0/24 (127.0.x.y stays for the tests' own addresses). */
const firstNetwork = 256
const networkCount = 65_536 - firstNetwork

/**
 * Reporters per 10 minutes at `hourOfWeek` (0 = Monday 00:00-01:00 UTC) for a
 * source of `scale` 1: 0.6 on weekday afternoons (16:00 UTC, Europe's
 * afternoon and America's morning), a quarter of that at 04:00 UTC, and 60 %
 * of the weekday curve on Saturdays and Sundays. About 30 reporters a day.
 */
export const backgroundRate = (hourOfWeek: number, scale = 1): number => {
  const day = Math.floor(hourOfWeek / 24)
  const hour = hourOfWeek % 24
  const daily = 0.25 + 0.75 * (0.5 - 0.5 * Math.cos((2 * Math.PI * (hour - 4)) / 24))
  const weekly = day >= 5 ? 0.6 : 1
  return 0.6 * daily * weekly * scale
}

/** One report: when, who (a host of a network) and, when given, the symptom. */
export interface CrowdReport {
  readonly at: number
  /** The reporter: `network * 256 + host`, unique across networks. */
  readonly reporter: number
  /** The reporter's network (a /24): 256 … 65,535. */
  readonly network: number
  readonly symptom?: CrowdSymptom | undefined
}

/** An outage of a source, as the simulator plays it. */
export interface CrowdOutage {
  /** When the official status flips (the source's status page leaves operational). */
  readonly at: number
  /** How long the official status stays down; reports stop with it. */
  readonly durationMs: number
  /** Reports start this long before the flip. */
  readonly leadMs: number
  /** From the first reports to the peak rate. */
  readonly rampMs: number
  /** Reporters per 10 minutes at the peak (for this source: already scaled). */
  readonly peakPer10Min: number
}

/** A source's crowd: its seed, its size relative to an average source, and its offices. */
export interface CrowdSource {
  readonly seed: number
  /** Background and outage reporters relative to an average source (1). */
  readonly scale: number
  /** Networks many of the source's reporters share (offices, campuses, a carrier's NAT). */
  readonly offices: ReadonlyArray<number>
  /** The share of reports that come from an office. */
  readonly officeShare: number
}

export interface CrowdSourceOptions {
  /** The source's scale (default 1). */
  readonly scale?: number
  /** How many offices (default 8). */
  readonly offices?: number
  /** The share of reports from offices (default 0.1). */
  readonly officeShare?: number
}

/** A source's crowd from a seed (a number, or a key hashed with FNV-1a). */
export const crowdSource = (seed: number | string, options: CrowdSourceOptions = {}): CrowdSource => {
  const s = typeof seed === "string" ? fnv1a(seed) : seed >>> 0
  const random = prng(fnv1a(`offices:${s}`))
  return {
    seed: s,
    scale: options.scale ?? 1,
    offices: Array.from({ length: options.offices ?? 8 }, () => firstNetwork + Math.floor(random() * networkCount)),
    officeShare: options.officeShare ?? 0.1
  }
}

/**
 * A log-normal scale with median 1 (`sigma` the standard deviation of its
 * logarithm), clamped to 0.05-50: a catalog's sources are not all as busy as
 * one another. Deterministic in `seed`.
 */
export const sourceScale = (seed: number, sigma: number): number => {
  if (sigma <= 0) return 1
  const random = prng(fnv1a(`scale:${seed >>> 0}`))
  const u1 = Math.max(random(), 1e-12)
  const u2 = random()
  const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2)
  return Math.min(50, Math.max(0.05, Math.exp(sigma * normal)))
}

/** The loopback address of a reporter: 127.x.y.z, x.y its network, z its host. */
export const crowdAddress = (report: Pick<CrowdReport, "reporter" | "network">): string => {
  const host = report.reporter - report.network * 256
  return `127.${report.network >> 8}.${report.network & 255}.${host}`
}

/** The reporter of the `n`-th address of a sequence of distinct ones (for load generators): networks first, then hosts. */
export const nthReporter = (n: number): Pick<CrowdReport, "reporter" | "network"> => {
  const network = firstNetwork + (n % networkCount)
  const host = 1 + (Math.floor(n / networkCount) % 254)
  return { reporter: network * 256 + host, network }
}

const backgroundSymptoms: ReadonlyArray<CrowdSymptom> = ["other", "other", "slow", "login", "errors", "down"]
const outageSymptoms: ReadonlyArray<CrowdSymptom> = ["down", "down", "down", "errors", "errors", "slow", "login", "other"]

/** A reporter of `source` drawn with `random`: from an office (a shared /24) or a network of its own. */
const drawReporter = (source: CrowdSource, random: () => number): Pick<CrowdReport, "reporter" | "network"> => {
  const network = source.offices.length > 0 && random() < source.officeShare
    ? source.offices[Math.floor(random() * source.offices.length)]!
    : firstNetwork + Math.floor(random() * networkCount)
  const host = 1 + Math.floor(random() * 254)
  return { reporter: network * 256 + host, network }
}

/** The background reports of one clock hour `[hour, hour + 1 h)` of `source`: a Poisson process at the hour's rate. */
const backgroundHour = (source: CrowdSource, hour: number, out: Array<CrowdReport>) => {
  const rate = backgroundRate(hourOfWeekOf(hour), source.scale) / per10MinMs
  if (rate <= 0) return
  const random = prng(fnv1a(`bg:${source.seed}:${hour}`))
  for (let t = hour - Math.log(1 - random()) / rate; t < hour + hourMs; t -= Math.log(1 - random()) / rate) {
    const symptom = backgroundSymptoms[Math.floor(random() * backgroundSymptoms.length)]!
    out.push({ at: Math.floor(t), ...drawReporter(source, random), symptom })
  }
}

/** The reporters' rate (per ms) of `outage` at `t`: a linear ramp from `at − leadMs` over `rampMs`, then the peak until the end. */
const outageRate = (outage: CrowdOutage, t: number): number => {
  const start = outage.at - outage.leadMs
  if (t < start || t >= outage.at + outage.durationMs) return 0
  const peak = outage.peakPer10Min / per10MinMs
  return outage.rampMs <= 0 ? peak : peak * Math.min(1, (t - start) / outage.rampMs)
}

/** The share of an outage's reporters who report again, 1 to 20 minutes later (while it lasts). */
const repeatShare = 0.1

/** The reports of one outage (thinning of a Poisson process at the peak rate: exact for the ramp). */
const outageReports = (source: CrowdSource, outage: CrowdOutage, out: Array<CrowdReport>) => {
  const peak = outage.peakPer10Min / per10MinMs
  if (peak <= 0) return
  const random = prng(fnv1a(`outage:${source.seed}:${outage.at}`))
  const end = outage.at + outage.durationMs
  for (let t = outage.at - outage.leadMs - Math.log(1 - random()) / peak; t < end; t -= Math.log(1 - random()) / peak) {
    const accept = random() < outageRate(outage, t) / peak
    const who = drawReporter(source, random)
    const symptom = outageSymptoms[Math.floor(random() * outageSymptoms.length)]!
    const again = random() < repeatShare ? t + minuteMs + random() * 19 * minuteMs : Infinity
    if (!accept) continue
    out.push({ at: Math.floor(t), ...who, symptom })
    if (again < end) out.push({ at: Math.floor(again), ...who, symptom })
  }
}

/**
 * The reports of `source` in `[from, to)`, oldest first: its background and
 * the reports of `outages` (those of any outage that fall in the range).
 */
export const crowdArrivals = (source: CrowdSource, from: number, to: number, outages: ReadonlyArray<CrowdOutage> = []): Array<CrowdReport> => {
  const out: Array<CrowdReport> = []
  for (let hour = Math.floor(from / hourMs) * hourMs; hour < to; hour += hourMs) backgroundHour(source, hour, out)
  for (const outage of outages) outageReports(source, outage, out)
  return out.filter((r) => r.at >= from && r.at < to).toSorted((a, b) => a.at - b.at || a.reporter - b.reporter)
}

/** The official status of a source with `outages` at `t`: down during one, else operational. */
export const officialStatusAt = (outages: ReadonlyArray<CrowdOutage>, t: number): "operational" | "down" =>
  outages.some((o) => t >= o.at && t < o.at + o.durationMs) ? "down" : "operational"
