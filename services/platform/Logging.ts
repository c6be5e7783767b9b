import { Config, Effect, Layer, Logger, References } from "effect"

/**
 * Structured logs: one JSON object per line on stdout (`LOG_FORMAT=json`, the
 * default) or human-readable lines (`LOG_FORMAT=pretty`); `LOG_LEVEL` sets the
 * minimum level.
 */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const format = yield* Config.Literals(["json", "pretty"], "LOG_FORMAT").pipe(Config.withDefault("json"))
  const level = yield* Config.LogLevel("LOG_LEVEL").pipe(Config.withDefault("Info"))
  return Layer.merge(
    Logger.layer([format === "json" ? Logger.consoleJson : Logger.consolePretty()]),
    Layer.succeed(References.MinimumLogLevel, level)
  )
}))
