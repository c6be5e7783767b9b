/**
 * The crowd's confidence that a source (or one of its components, or a region)
 * is having trouble, from users' reports: decision record 0014.
 *
 * 1. **Reporters, spread.** The distinct reporters of the last `windowMs`
 *    (a reporter is a salted hash; one report each per window). At most
 *    `perNetwork` of them count per network (an address's /24 or /48), so one
 *    office or one script reporting from many accounts moves the score little.
 * 2. **Against the source's own usual.** `expected` is the source's mean of
 *    distinct reporters per window at the same hour of the week (averaged with
 *    the `baselineSpreadHours` beside it) over the last `baselineWeeks` weeks,
 *    never below `floor`: a source nobody reports is treated as if it got
 *    `floor` reporters per window anyway, so one or two reports mean little.
 * 3. **How unlikely by chance.** With reports of a quiet moment arriving as a
 *    Poisson process, `surprise` is −log10 of the chance of at least that many
 *    counted reporters in a window when `expected` are usual (3 = once in a
 *    thousand windows). The last minutes (`shortWindowsMs`) are scored too,
 *    the usual scaled to them, less `shortWindowPenalty` for looking more than
 *    once; the most surprising window is the score, so a burst is seen before
 *    it fills ten minutes.
 * 4. **Corroboration.** Each organization whose website monitors of the
 *    provider's endpoints fail at the same time adds `monitorSurprise` (up to
 *    `monitorOrganizations` of them), only when someone reported: monitors
 *    corroborate reports, they are not reporters.
 * 5. **Confidence** = surprise ÷ `fullSurprise`, as a percentage capped at 100.
 *    A **crowd signal** starts at `startAt` % with at least `minReporters`
 *    counted, and ends below `endBelow` % (the gap keeps a signal from
 *    flapping on one report more or less).
 *
 * Plain TypeScript without Effect: the API, the ingest path, the portal's
 * explanation and the benchmark's detector all call these functions.
 */

export interface CrowdParameters {
  /** The window reporters are counted in. */
  readonly windowMs: number
  /**
   * Shorter windows ending now, also scored (the usual scaled to each): a burst
   * of reporters in the last minutes is seen before it fills the whole window.
   */
  readonly shortWindowsMs: ReadonlyArray<number>
  /** Surprise taken off a short window's, for looking at more than one window. */
  readonly shortWindowPenalty: number
  /** Weeks of reports the usual rate of each hour of the week is taken from. */
  readonly baselineWeeks: number
  /** The hours on each side of an hour of the week its usual is averaged with. */
  readonly baselineSpreadHours: number
  /** The least usual reporters per window assumed for any source. */
  readonly floor: number
  /** Reporters counted per network at most. */
  readonly perNetwork: number
  /** The surprise at which confidence is 100 %. */
  readonly fullSurprise: number
  /** Surprise each corroborating organization adds, and how many count. */
  readonly monitorSurprise: number
  readonly monitorOrganizations: number
  /** Confidence (%) at which a signal starts, and below which it ends. */
  readonly startAt: number
  readonly endBelow: number
  /** Counted reporters a signal needs at least. */
  readonly minReporters: number
}

export const crowdDefaults: CrowdParameters = {
  windowMs: 10 * 60_000,
  shortWindowsMs: [60_000, 2 * 60_000, 3 * 60_000, 5 * 60_000],
  // log10 of the four short windows looked at beside the whole one (Bonferroni): decision 0014.
  shortWindowPenalty: Math.log10(4),
  baselineWeeks: 4,
  baselineSpreadHours: 1,
  floor: 0.2,
  perNetwork: 2,
  fullSurprise: 6.5,
  monitorSurprise: 1,
  monitorOrganizations: 2,
  startAt: 70,
  endBelow: 30,
  minReporters: 3
}

/** One window's distinct reporters counted: in how many networks, and how many count after the per-network cap. */
export interface WindowCount {
  readonly reporters: number
  readonly networks: number
  readonly counted: number
}

/** A window's reporters by network (how many each network has), or already counted. */
export type WindowReporters = ReadonlyArray<number> | WindowCount

/** What the score is computed from, for one source, component or region at one moment. */
export interface CrowdEvidence {
  /** Distinct reporters in the window, by network: how many reporters each network has (or their count). */
  readonly networks: WindowReporters
  /** The same within each of the parameters' `shortWindowsMs` (in their order); none: not scored. */
  readonly recent?: ReadonlyArray<WindowReporters> | undefined
  /** The usual distinct reporters per window at this hour of the week (before the floor). */
  readonly usual: number
  /** Organizations whose monitors of the provider's endpoints are failing now. */
  readonly failingMonitorOrganizations: number
}

export interface CrowdScore {
  /** 0-100. */
  readonly confidence: number
  /** The window the figures below are of: the whole window, or the short one that gave the higher surprise. */
  readonly windowMs: number
  readonly reporters: number
  readonly networks: number
  /** Reporters counted after the per-network cap. */
  readonly counted: number
  /** The usual reporters per window the count is compared with (after the floor). */
  readonly expected: number
  /** −log10 of the chance of this many by chance, corroboration included. */
  readonly surprise: number
  readonly corroborating: number
}

const ln10 = Math.log(10)

/** ln(n!) by summing logs (exact enough; n is a count of reporters). */
const lnFactorial = (n: number): number => {
  let s = 0
  for (let k = 2; k <= n; k++) s += Math.log(k)
  return s
}

/**
 * log10 of P(X ≥ n) for X ~ Poisson(λ), without underflow: for n above λ the
 * tail is pmf(n) × (1 + λ/(n+1) + λ²/((n+1)(n+2)) + …), summed until the terms
 * no longer matter; at or below λ it is 1 − P(X < n).
 */
export const log10PoissonTail = (n: number, lambda: number): number => {
  if (n <= 0) return 0
  if (lambda <= 0) return -Infinity
  if (n <= lambda) {
    let pmf = Math.exp(-lambda)
    let cdf = 0
    for (let k = 0; k < n; k++) {
      cdf += pmf
      pmf *= lambda / (k + 1)
    }
    return Math.log10(Math.max(Number.MIN_VALUE, 1 - cdf))
  }
  const lnPmf = -lambda + n * Math.log(lambda) - lnFactorial(n)
  let sum = 1
  let term = 1
  for (let k = n + 1; k < n + 10_000; k++) {
    term *= lambda / k
    sum += term
    if (term < 1e-12 * sum) break
  }
  return (lnPmf + Math.log(sum)) / ln10
}

/** A window's reporters by network, counted under the per-network cap. */
export const countReporters = (reporters: WindowReporters, p: CrowdParameters = crowdDefaults): WindowCount => {
  if (!Array.isArray(reporters)) return reporters as WindowCount
  const networks = reporters as ReadonlyArray<number>
  return {
    reporters: networks.reduce((a, b) => a + b, 0),
    networks: networks.length,
    counted: networks.reduce((a, b) => a + Math.min(b, p.perNetwork), 0)
  }
}

/** The figures of one window: its reporters against `usual` scaled from the whole window to `windowMs`. */
const windowScore = (reporters: WindowReporters, windowMs: number, usual: number, penalty: number, p: CrowdParameters) => {
  const { counted, ...count } = countReporters(reporters, p)
  const expected = (Math.max(usual, p.floor) * windowMs) / p.windowMs
  return {
    windowMs,
    reporters: count.reporters,
    networks: count.networks,
    counted,
    expected,
    chance: Math.max(0, -log10PoissonTail(counted, expected) - penalty)
  }
}

/** The score of `evidence` under `p`: the whole window's, or a short window's when that is more surprising. */
export const crowdScore = (evidence: CrowdEvidence, p: CrowdParameters = crowdDefaults): CrowdScore => {
  let best = windowScore(evidence.networks, p.windowMs, evidence.usual, 0, p)
  evidence.recent?.forEach((networks, i) => {
    const windowMs = p.shortWindowsMs[i]
    if (windowMs === undefined) return
    const short = windowScore(networks, windowMs, evidence.usual, p.shortWindowPenalty, p)
    if (short.chance > best.chance) best = short
  })
  const corroborating = best.counted === 0 ? 0 : Math.min(evidence.failingMonitorOrganizations, p.monitorOrganizations)
  const surprise = best.chance + corroborating * p.monitorSurprise
  return {
    confidence: Math.round(Math.min(100, (surprise / p.fullSurprise) * 100)),
    windowMs: best.windowMs,
    reporters: best.reporters,
    networks: best.networks,
    counted: best.counted,
    expected: best.expected,
    surprise,
    corroborating
  }
}

/**
 * The evidence's reporters from stored reports of the window, in any order
 * (each a reporter and the network it reported from; a reporter counts once,
 * in the network of its latest report, the later one in `reports` at equal
 * times): the whole window's networks and each short window's (reports after
 * `now − shortWindowMs`). One pass: a reporter's latest report is in a short
 * window exactly when any of its reports is, so its network there is the same.
 */
export const windowNetworks = <K>(
  reports: Iterable<{ readonly at: number; readonly reporter: K; readonly network: K }>,
  now: number,
  p: CrowdParameters = crowdDefaults
): Pick<CrowdEvidence, "networks" | "recent"> => {
  const since = now - p.windowMs
  const latest = new Map<K, { readonly at: number; readonly network: K }>()
  for (const r of reports) {
    if (r.at <= since || r.at > now) continue
    const seen = latest.get(r.reporter)
    if (seen === undefined || r.at >= seen.at) latest.set(r.reporter, r)
  }
  const byNetwork = new Map<K, number>()
  const recent = p.shortWindowsMs.map(() => new Map<K, number>())
  for (const { at, network } of latest.values()) {
    byNetwork.set(network, (byNetwork.get(network) ?? 0) + 1)
    for (const [i, w] of p.shortWindowsMs.entries()) {
      if (at > now - w) recent[i]!.set(network, (recent[i]!.get(network) ?? 0) + 1)
    }
  }
  return { networks: [...byNetwork.values()], recent: recent.map((m) => [...m.values()]) }
}

/**
 * Whether a signal is on after `score`, given whether it was on: it starts at
 * `startAt` with `minReporters` counted, and holds until below `endBelow`.
 */
export const signalOn = (wasOn: boolean, score: Pick<CrowdScore, "confidence" | "counted">, p: CrowdParameters = crowdDefaults): boolean =>
  wasOn ? score.confidence >= p.endBelow : score.confidence >= p.startAt && score.counted >= p.minReporters

/**
 * The usual distinct reporters per window at each hour of the week (168
 * values, Monday 00:00 UTC first), from the distinct reporters counted in each
 * hour of the last `weeks` weeks: an hour's reporters spread over its windows.
 */
export const usualByHourOfWeek = (
  hours: ReadonlyArray<{ readonly hourOfWeek: number; readonly reporters: number }>,
  weeks: number,
  p: CrowdParameters = crowdDefaults
): Array<number> => {
  const raw = Array.from({ length: 168 }, () => 0)
  const windowsPerHour = 3_600_000 / p.windowMs
  for (const h of hours) raw[h.hourOfWeek] = raw[h.hourOfWeek]! + h.reporters / (Math.max(1, weeks) * windowsPerHour)
  const k = p.baselineSpreadHours
  if (k <= 0) return raw
  return raw.map((_, h) => {
    let sum = 0
    for (let d = -k; d <= k; d++) sum += raw[(h + d + 168) % 168]!
    return sum / (2 * k + 1)
  })
}

/** The hour of the week of `ms` (0 = Monday 00:00-01:00 UTC). */
export const hourOfWeekOf = (ms: number): number => {
  const d = new Date(ms)
  return ((d.getUTCDay() + 6) % 7) * 24 + d.getUTCHours()
}

const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`
/** A usual count as people read it: one decimal, or one significant digit below 1 (0.04). */
const figure = (x: number) => Number(x >= 1 ? x.toFixed(1) : x.toPrecision(1))

/** Why the score is what it is, in a sentence the portal shows: "23 reporters in 10 min, usually 1". */
export const crowdReason = (score: CrowdScore, p: CrowdParameters = crowdDefaults): string => {
  if (score.reporters === 0) return `No reports in the last ${minutes(p.windowMs)}.`
  const who = `${score.reporters} ${score.reporters === 1 ? "reporter" : "reporters"} in ${minutes(score.windowMs)}`
  const spread = score.counted < score.reporters ? ` from ${score.networks} ${score.networks === 1 ? "network" : "networks"}` : ""
  const floor = (p.floor * score.windowMs) / p.windowMs
  const usual = score.expected <= floor ? `usually ${figure(floor)} or fewer` : `usually ${figure(score.expected)}`
  const monitors = score.corroborating === 0
    ? ""
    : `; monitors of ${score.corroborating} ${score.corroborating === 1 ? "organization" : "organizations"} failing too`
  return `${who}${spread}, ${usual}${monitors}.`
}
