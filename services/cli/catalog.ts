import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Fs from "node:fs/promises"
import * as Catalog from "../catalog/Catalog.ts"
import * as Migrations from "../platform/Migrations.ts"
import * as Stores from "../platform/Stores.ts"

const format = Flag.Literals("format", ["json", "csv"]).pipe(
  Flag.withDescription("File format (default: from the file name, else json)"),
  Flag.optional
)

const formatOf = (flag: Option.Option<"json" | "csv">, file: string): "json" | "csv" =>
  Option.getOrElse(flag, () => (file.toLowerCase().endsWith(".csv") ? "csv" : "json"))

const importCommand = Command.make(
  "import",
  { file: Argument.String("file").pipe(Argument.withDescription("JSON or CSV catalog file")), format },
  Effect.fn(function*({ file, format }) {
    const text = yield* Effect.tryPromise({
      try: () => Fs.readFile(file, "utf8"),
      catch: (cause) => new Catalog.CatalogError({ message: `cannot read ${file}`, cause })
    })
    const entries = yield* Catalog.parseFile(text, formatOf(format, file))
    yield* Migrations.migrateAll()
    const result = yield* Catalog.load(entries)
    yield* Console.log(JSON.stringify({ file, sources: entries.length, ...result }))
  }, Effect.provide(Stores.layer))
).pipe(Command.withDescription("Load catalog sources from a JSON or CSV file (insert or update by key)"))

const exportCommand = Command.make(
  "export",
  {
    format,
    output: Flag.String("output").pipe(Flag.withAlias("o"), Flag.withDescription("Write to this file instead of stdout"), Flag.optional)
  },
  Effect.fn(function*({ format, output }) {
    yield* Migrations.migrateAll()
    const entries = yield* Catalog.exportAll()
    const chosen = formatOf(format, Option.getOrElse(output, () => ""))
    const text = chosen === "csv" ? Catalog.toCsv(entries) : JSON.stringify(entries, null, 2) + "\n"
    if (Option.isSome(output)) {
      yield* Effect.tryPromise({
        try: () => Fs.writeFile(output.value, text),
        catch: (cause) => new Catalog.CatalogError({ message: `cannot write ${output.value}`, cause })
      })
    } else {
      yield* Console.log(text.trimEnd())
    }
  }, Effect.provide(Stores.layer))
).pipe(Command.withDescription("Write every catalog source as JSON or CSV"))

export const catalog = Command.make("catalog").pipe(
  Command.withDescription("Import and export the catalog of sources"),
  Command.withSubcommands([importCommand, exportCommand])
)
