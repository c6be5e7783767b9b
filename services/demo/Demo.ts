import { Clock, Config, Effect, Option, Schedule } from "effect"
import * as Catalog from "../catalog/Catalog.ts"
import { type SyntheticSpec, syntheticSpecs } from "../catalog/Synthetic.ts"
import { makeDemoWorld } from "./DemoWorld.ts"
import { DemoError, spawnSimulator } from "./SimulatorChild.ts"

/** Demo settings (README, Configuration). */
export const DemoConfig = Config.all({
  simulatorUrl: Config.String("SIMULATOR_URL").pipe(Config.withDefault("http://127.0.0.1:4100")),
  sources: Config.Int("DEMO_SOURCES").pipe(Config.withDefault(Catalog.demoSyntheticCount)),
  tickMs: Config.Int("DEMO_TICK_MS").pipe(Config.withDefault(60_000)),
  seed: Config.option(Config.Int("DEMO_SEED"))
})

/**
 * Demo mode (`statusgrid start --demo`), for as long as the scope lasts: the
 * simulator as a child process at SIMULATOR_URL serving DEMO_SOURCES synthetic
 * sources, those sources enabled in the catalog (pointing at it) and every
 * other synthetic source disabled, and the demo world changing some of them
 * every DEMO_TICK_MS. Returns the simulator and the featured sources, which
 * new organizations get as their starter stack (StarterStack.ts).
 */
export const start = Effect.fn("Demo.start")(function*() {
  const config = yield* DemoConfig
  if (config.sources < 1 || config.sources > 20_000) {
    return yield* new DemoError({ message: `DEMO_SOURCES: expected 1 to 20000, got ${config.sources}` })
  }
  if (config.tickMs < 100) return yield* new DemoError({ message: `DEMO_TICK_MS: expected at least 100, got ${config.tickMs}` })
  const simulator = yield* spawnSimulator({ url: config.simulatorUrl, sources: config.sources })
  const { enabled } = yield* Catalog.enableSynthetic(Catalog.syntheticEntries(config.sources, simulator.url))

  // The world moves the sources polled most often (every 30 s, else every 60 s), so that a change shows
  // within a minute of the start; the others would lag by up to 15 minutes.
  const specs = syntheticSpecs(config.sources)
  const critical = specs.filter((s) => s.check_class === "critical")
  const high = specs.filter((s) => s.check_class === "high")
  const candidates = critical.length > 0 ? critical : high.length > 0 ? high : specs
  // The featured sources (new organizations' starter stack, StarterStack.ts): the smallest of those polled most
  // often, changed by a world of their own every tick, so that a starter stack moves within a minute or two.
  const featured = featuredOf(candidates)
  const rest = candidates.filter((s) => !featured.includes(s.key)).map((s) => s.key)
  const now = yield* Clock.currentTimeMillis
  const seed = Option.getOrElse(config.seed, () => now % 2 ** 31)
  const worlds = [
    ...(rest.length > 0 ? [makeDemoWorld({ simulatorUrl: simulator.url, keys: rest, seed })] : []),
    makeDemoWorld({ simulatorUrl: simulator.url, keys: featured, seed: seed + 1, incidentsPerTick: 1, flipsPerTick: 1 })
  ]
  for (const world of worlds) {
    yield* world.step().pipe(
      Effect.tap((report) => Effect.logDebug("demo world tick").pipe(Effect.annotateLogs({ ...report }))),
      Effect.repeat(Schedule.spaced(config.tickMs)),
      Effect.forkScoped
    )
  }
  yield* Effect.logInfo("demo mode: the simulator runs beside the service").pipe(Effect.annotateLogs({
    simulator: simulator.url,
    sources: enabled,
    tick_ms: config.tickMs,
    seed,
    featured: featured.join(",")
  }))
  return { simulator, featured }
})

/** How many sources a starter stack shows. */
export const featuredCount = 3

/** Page formats that carry components (feeds, social posts and health checks do not, or not as a page's tree). */
export const componentFormats: ReadonlySet<string> = new Set(["statuspage_io", "incident_io", "instatus", "betterstack", "cachet_v2", "cachet_v3"])

/**
 * The `featuredCount` sources in a format with components and with the fewest of them (then the catalog's order):
 * small enough for the Free plan.
 */
export const featuredOf = (candidates: ReadonlyArray<SyntheticSpec>): Array<string> =>
  candidates
    .filter((spec) => componentFormats.has(spec.provider))
    .map((spec, i) => ({ spec, i }))
    .toSorted((a, b) => a.spec.components + a.spec.groups - (b.spec.components + b.spec.groups) || a.i - b.i)
    .slice(0, featuredCount)
    .map((x) => x.spec.key)
