import { Console, Effect, Layer } from "effect"
import { Command, Flag } from "effect/cli"
import { ApiKeys } from "../orgs/ApiKeys.ts"
import { Organizations } from "../orgs/Organizations.ts"
import * as Migrations from "../platform/Migrations.ts"
import * as Stores from "../platform/Stores.ts"

const create = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(Flag.withDescription("Display name of the organization")),
    slug: Flag.String("slug").pipe(Flag.withDescription("Lower-case letters, digits and inner hyphens; used in URLs")),
    plan: Flag.Literals("plan", ["free", "pro", "enterprise"]).pipe(Flag.withDefault("free" as const))
  },
  Effect.fn(function*({ name, slug, plan }) {
    yield* Migrations.migratePostgres()
    const { id } = yield* Organizations.use((o) => o.create({ name, slug, plan }))
    const key = yield* ApiKeys.use((k) => k.issue(id, "created by statusgrid org create", "admin"))
    // The key is printed once and stored only as a hash.
    yield* Console.log(JSON.stringify({ organization: { id, slug, name, plan }, admin_api_key: key }))
  }, Effect.provide(Layer.mergeAll(Organizations.layer, ApiKeys.layer).pipe(Layer.provideMerge(Stores.layer))))
).pipe(Command.withDescription(
  "Create an organization and print an Admin API key for it (once). With embedded stores, run it while statusgrid is stopped"
))

export const org = Command.make("org").pipe(
  Command.withDescription("Organizations"),
  Command.withSubcommands([create])
)
