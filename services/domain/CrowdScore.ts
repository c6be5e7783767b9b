/**
 * The crowd's confidence that a source (or one of its components, or a region)
 * is having trouble, from users' reports: decision record 0014.
 *
 * 1. **Reporters, spread.** The distinct reporters of the last `windowMs`
 *    (a reporter is a salted hash; one report each per window). At most
 *    `perNetwork` of them count per network (an address's /24 or /48), so one
 *    office or one script reporting from many accounts moves the score little.
 * 2. **Against the source's own usual.** `expected` is the source's mean of
 *    distinct reporters per window at the same hour of the week over the last
 *    `baselineWeeks` weeks, never below `floor`: a source nobody reports is
 *    treated as if it got `floor` reporters per window anyway, so one or two
 *    reports mean little.
 * 3. **How unlikely by chance.** With reports of a quiet moment arriving as a
 *    Poisson process, `surprise` is −log10 of the chance of at least that many
 *    counted reporters in a window when `expected` are usual (3 = once in a
 *    thousand windows).
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
  /** Weeks of reports the usual rate of each hour of the week is taken from. */
  readonly baselineWeeks: number
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
  baselineWeeks: 4,
  floor: 1,
  perNetwork: 2,
  fullSurprise: 6,
  monitorSurprise: 1,
  monitorOrganizations: 2,
  startAt: 70,
  endBelow: 30,
  minReporters: 3
}

/** What the score is computed from, for one source, component or region at one moment. */
export interface CrowdEvidence {
  /** Distinct reporters in the window, by network: how many reporters each network has. */
  readonly networks: ReadonlyArray<number>
  /** The usual distinct reporters per window at this hour of the week (before the floor). */
  readonly usual: number
  /** Organizations whose monitors of the provider's endpoints are failing now. */
  readonly failingMonitorOrganizations: number
}

export interface CrowdScore {
  /** 0-100. */
  readonly confidence: number
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

/** The score of `evidence` under `p`. */
export const crowdScore = (evidence: CrowdEvidence, p: CrowdParameters = crowdDefaults): CrowdScore => {
  const reporters = evidence.networks.reduce((a, b) => a + b, 0)
  const counted = evidence.networks.reduce((a, b) => a + Math.min(b, p.perNetwork), 0)
  const expected = Math.max(evidence.usual, p.floor)
  const corroborating = counted === 0 ? 0 : Math.min(evidence.failingMonitorOrganizations, p.monitorOrganizations)
  const surprise = Math.max(0, -log10PoissonTail(counted, expected)) + corroborating * p.monitorSurprise
  return {
    confidence: Math.round(Math.min(100, (surprise / p.fullSurprise) * 100)),
    reporters,
    networks: evidence.networks.length,
    counted,
    expected,
    surprise,
    corroborating
  }
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
  const usual = Array.from({ length: 168 }, () => 0)
  const windowsPerHour = 3_600_000 / p.windowMs
  for (const h of hours) usual[h.hourOfWeek] = usual[h.hourOfWeek]! + h.reporters / (Math.max(1, weeks) * windowsPerHour)
  return usual
}

/** The hour of the week of `ms` (0 = Monday 00:00-01:00 UTC). */
export const hourOfWeekOf = (ms: number): number => {
  const d = new Date(ms)
  return ((d.getUTCDay() + 6) % 7) * 24 + d.getUTCHours()
}

const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`

/** Why the score is what it is, in a sentence the portal shows: "23 reporters in 10 min, usually 1". */
export const crowdReason = (score: CrowdScore, p: CrowdParameters = crowdDefaults): string => {
  if (score.reporters === 0) return `No reports in the last ${minutes(p.windowMs)}.`
  const who = `${score.reporters} ${score.reporters === 1 ? "reporter" : "reporters"} in ${minutes(p.windowMs)}`
  const spread = score.counted < score.reporters ? ` from ${score.networks} ${score.networks === 1 ? "network" : "networks"}` : ""
  const usual = score.expected <= p.floor ? `usually ${p.floor} or fewer` : `usually ${Number(score.expected.toFixed(1))}`
  const monitors = score.corroborating === 0
    ? ""
    : `; monitors of ${score.corroborating} ${score.corroborating === 1 ? "organization" : "organizations"} failing too`
  return `${who}${spread}, ${usual}${monitors}.`
}
