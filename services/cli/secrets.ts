import { Console, Effect, Layer } from "effect"
import { Command, Flag } from "effect/cli"
import { rotateSecrets } from "../orgs/SecretRotation.ts"
import * as Migrations from "../platform/Migrations.ts"
import * as Postgres from "../platform/Postgres.ts"
import { SecretBox } from "../platform/SecretBox.ts"

const rotate = Command.make(
  "rotate",
  {
    batch: Flag.Int("batch").pipe(Flag.withDescription("Rows re-sealed per transaction"), Flag.withDefault(500))
  },
  Effect.fn(function*({ batch }) {
    yield* Migrations.migratePostgres()
    const report = yield* rotateSecrets({ batch })
    yield* Console.log(JSON.stringify(report))
  }, Effect.provide(Layer.merge(Postgres.layer, SecretBox.layer))) // sealed values live in PostgreSQL only
).pipe(Command.withDescription(
  "Re-seal every stored secret (channel secrets, monitor credentials, queued invitation mails) under SECRETS_KEY, " +
    "format 2 with its row's binding; values under SECRETS_KEY_PREVIOUS or in format 1 are opened and sealed again. " +
    "Prints the counts per table as one JSON line; idempotent. With embedded stores, run it while statusgrid is stopped"
))

export const secrets = Command.make("secrets").pipe(
  Command.withDescription("Stored secrets"),
  Command.withSubcommands([rotate])
)
