import { Cause, Console, Effect, Predicate, Runtime, Schema } from "effect"
import { CliError, CliOutput, Flag, GlobalFlag } from "effect/cli"

/**
 * How the CLI reports a failure: one line on stderr, saying what failed and
 * what to do, and exit 1 (or the error's own exit code). `--verbose` adds the
 * full cause (the Effect trace). A command's own output (JSON on stdout) is
 * untouched.
 */

/** `--verbose`: accepted by every command, read by the reporter. */
export const Verbose = GlobalFlag.Setting("verbose")({
  flag: Flag.Boolean("verbose").pipe(Flag.withDefault(false), Flag.withDescription("On failure, print the whole cause (trace) after the one-line error"))
})

const isVerbose = (argv: ReadonlyArray<string>) => argv.includes("--verbose")

/** Groups whose subcommand is part of the command's name. */
const groups = new Set(["org", "secrets", "catalog", "bench"])

/** `statusgrid probe`, `statusgrid org plan`: the command the arguments select. */
export const commandName = (argv: ReadonlyArray<string>): string => {
  const [first, second] = argv
  if (first === undefined || first.startsWith("-")) return "statusgrid"
  return second !== undefined && groups.has(first) && !second.startsWith("-") ? `statusgrid ${first} ${second}` : `statusgrid ${first}`
}

/** What to do, by the error's tag; anything else gets the generic hint. */
const hints: ReadonlyMap<string, string> = new Map([
  ["DetectError", "Check the URL in a browser; if it is a status page, feed or health endpoint, try --type <provider>"],
  ["AdapterError", "The page is not what that provider type serves: try another --type, or none to detect it"],
  ["BusError", "Check that Redis is running and REDIS_URL points at it (without REDIS_URL the bus is in-process)"],
  ["SqlError", "Check that PostgreSQL is running and DATABASE_URL (or DATA_DIR for the embedded stores) points at it"],
  ["ConfigError", "Check the environment variable it names (README, Configuration)"],
  ["NotFound", "Check the name or id given"],
  ["Conflict", "Choose another value"],
  ["HttpProcessesError", "Set DATABASE_URL, REDIS_URL and CLICKHOUSE_URL, or leave HTTP_PROCESSES at 1 (decision 0020)"],
  ["HttpProcessesBenchError", "Run it against PostgreSQL and Redis servers, or without --http-processes"],
  ["SecretBoxError", "Check SECRETS_KEY and SECRETS_KEY_PREVIOUS: 32 bytes each, base64 (README, Configuration)"]
])

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim()

const stringField = (value: unknown, name: string): string | undefined =>
  Predicate.hasProperty(value, name) && typeof value[name] === "string" && value[name] !== "" ? value[name] : undefined

/** The error's own words: its message, else its cause's (with the operation that failed), else its tag. */
const messageOf = (error: unknown): { readonly tag: string | undefined; readonly message: string } => {
  const tag = stringField(error, "_tag")
  const cause = Predicate.hasProperty(error, "cause") ? stringField(error.cause, "message") : undefined
  const operation = stringField(error, "operation")
  const message = stringField(error, "message") ??
    (cause === undefined ? undefined : operation === undefined ? cause : `${operation}: ${cause}`) ??
    tag ?? String(error)
  return { tag, message: oneLine(message).replace(/\.+$/, "") }
}

/** The one line for a failure of `command`. */
export const failureLine = (command: string, error: unknown): string => {
  const { tag, message } = messageOf(error)
  const hint = (tag === undefined ? undefined : hints.get(tag)) ?? "Run it again with --verbose for details"
  return `${command} failed: ${message}${tag === undefined || message.startsWith(tag) ? "" : ` [${tag}]`}. ${hint}.`
}

/** Ends the process with `code`, the failure already printed (the runtime adds nothing). */
export class Reported extends Schema.TaggedError<Reported>()("Reported", { code: Schema.Number }) {
  override readonly [Runtime.errorReported] = false
  override get [Runtime.errorExitCode](): number {
    return this.code
  }
}

/**
 * Reports a failed command as one line (the whole cause too with `--verbose`).
 * Interruption (SIGTERM/SIGINT) passes through untouched, as do failures that
 * were already reported (`Runtime.errorReported` false, e.g. `probe --monitor`'s
 * exit codes) and invalid invocations (the presenter below printed them).
 */
export const reportFailures = (argv: ReadonlyArray<string>) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | Reported, R> =>
  Effect.catchCause(self, (cause): Effect.Effect<never, E | Reported> => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
    const error = Cause.squash(cause)
    if (Predicate.hasProperty(error, Runtime.errorReported) && error[Runtime.errorReported] === false) {
      return Effect.failCause(cause)
    }
    if (CliError.isCliError(error)) return Effect.fail(new Reported({ code: 1 }))
    const exitCode = Predicate.hasProperty(error, Runtime.errorExitCode) && typeof error[Runtime.errorExitCode] === "number"
      ? error[Runtime.errorExitCode]
      : 1
    return Effect.gen(function*() {
      yield* Console.error(failureLine(commandName(argv), error))
      if (isVerbose(argv)) yield* Console.error(Cause.pretty(cause))
      return yield* new Reported({ code: exitCode })
    })
  })

/**
 * Invalid invocations (an unknown flag, a missing argument, a bad value) as
 * one line and where to find the usage; the whole help with `--verbose`.
 * Help asked for, and versions, print as usual.
 */
export const presenterLayer = (argv: ReadonlyArray<string>) =>
  CliOutput.layerPresenter({
    present: (event) =>
      event._tag !== "InvalidInvocation" || isVerbose(argv)
        ? CliOutput.defaultPresenter.present(event)
        : Console.error(
          `${event.commandPath.join(" ")}: ${event.errors.map((e) => oneLine(e.message)).join("; ")}. ` +
            `Run ${event.commandPath.join(" ")} --help for usage.`
        )
  })
