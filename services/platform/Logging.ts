import { Config, Effect, Layer, Logger, References } from "effect"

/** Warnings every start logs before the process's runner is registered, which mean nothing then. */
const startUpNoise = new Set(["No healthy runners available"])
/** How long after the process started `startUpNoise` is expected. */
const startUpS = 30

const messageText = (message: unknown): string =>
  Array.isArray(message) ? message.map(String).join(" ") : String(message)

/**
 * `logger` without the expected start-up noise: the cluster's "No healthy runners available", which
 * a runner's first look at the runners' storage logs before it has marked itself healthy (it does
 * so right after); later in the process's life the warning is logged as it comes.
 */
const withoutStartUpNoise = <Output>(logger: Logger.Logger<unknown, Output>) =>
  Logger.make((options: Logger.Options<unknown>) => {
    if (process.uptime() < startUpS && startUpNoise.has(messageText(options.message))) return
    logger.log(options)
  })

/**
 * Logs: human-readable lines when stdout is a terminal (a person started it), one JSON object per
 * line otherwise (services, pipes, log collectors); `LOG_FORMAT=json|pretty` chooses either way;
 * `LOG_LEVEL` sets the minimum level.
 */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const terminal = process.stdout.isTTY === true
  const format = yield* Config.Literals(["json", "pretty"], "LOG_FORMAT").pipe(Config.withDefault(terminal ? "pretty" : "json"))
  const level = yield* Config.LogLevel("LOG_LEVEL").pipe(Config.withDefault("Info"))
  return Layer.merge(
    Logger.layer([withoutStartUpNoise(format === "json" ? Logger.consoleJson : Logger.consolePretty())]),
    Layer.succeed(References.MinimumLogLevel, level)
  )
}))
