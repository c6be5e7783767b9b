import { Config, Schema } from "effect"

/**
 * Typed readers for the numeric settings (README, Configuration): a value out of range fails with a
 * ConfigError naming the variable, which the CLI prints as one line (services/cli/report.ts).
 */

const Positive = Schema.Int.check(Schema.isGreaterThan(0))

/** An integer above 0, `fallback` when unset. */
export const positiveInt = (name: string, fallback: number) => Config.schema(Positive, name).pipe(Config.withDefault(fallback))

/** An integer above 0, or none when unset. */
export const optionalPositiveInt = (name: string) => Config.option(Config.schema(Positive, name))

/** An integer of 0 or more (0 usually meaning "off"), `fallback` when unset. */
export const nonNegativeInt = (name: string, fallback: number) =>
  Config.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)), name).pipe(Config.withDefault(fallback))
