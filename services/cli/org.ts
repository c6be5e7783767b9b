import { Console, Effect, Layer } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Os from "node:os"
import { PlanId } from "../domain/Organization.ts"
import { ApiKeys } from "../orgs/ApiKeys.ts"
import { Organizations } from "../orgs/Organizations.ts"
import * as Migrations from "../platform/Migrations.ts"
import * as Postgres from "../platform/Postgres.ts"
import { SecretBox } from "../platform/SecretBox.ts"
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
  }, Effect.provide(Layer.mergeAll(Organizations.layer, ApiKeys.layer).pipe(Layer.provide(SecretBox.layer), Layer.provideMerge(Stores.layer))))
).pipe(Command.withDescription(
  "Create an organization and print an Admin API key for it (once). With embedded stores, run it while statusgrid is stopped"
))

/** Who runs an operator command, for the audit log: OS user @ host. */
const operator = (): string => {
  let user = "unknown"
  try {
    user = Os.userInfo().username
  } catch {
    // no passwd entry (some containers): the host still says where
  }
  return `${user}@${Os.hostname()}`.slice(0, 200)
}

const plan = Command.make(
  "plan",
  {
    slug: Argument.String("slug").pipe(Argument.withDescription("The organization's slug")),
    plan: Argument.Literals("plan", PlanId.literals).pipe(Argument.withDescription("free, pro or enterprise"))
  },
  Effect.fn(function*({ slug, plan }) {
    yield* Migrations.migratePostgres()
    const organization = yield* Organizations.use((o) => o.setPlanAsOperator(slug, plan, operator()))
    yield* Console.log(JSON.stringify(organization))
  }, Effect.provide(Organizations.layer.pipe(Layer.provideMerge(Postgres.layer)))) // a plan is a PostgreSQL row: no other store
).pipe(Command.withDescription(
  "Move an organization to another plan and print it as JSON; audited as the operator. Plans are the operator's to change, " +
    "not the organization's. With embedded stores, run it while statusgrid is stopped"
))

export const org = Command.make("org").pipe(
  Command.withDescription("Organizations"),
  Command.withSubcommands([create, plan])
)
