import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { detect } from "../adapters/detect.ts"
import { Fetcher } from "../adapters/Fetcher.ts"
import * as Probe from "../adapters/Probe.ts"
import { adapterFor, providerIds } from "../adapters/registry.ts"

/** `statusgrid probe <url>`: detect the provider type and print the normalized snapshot as JSON. */
export const probe = Command.make(
  "probe",
  {
    url: Argument.String("url").pipe(Argument.withDescription("A status page, feed or health endpoint URL")),
    type: Flag.Literals("type", providerIds).pipe(
      Flag.withDescription("Provider type to read the URL as, skipping detection"),
      Flag.optional
    ),
    regions: Flag.String("regions").pipe(
      Flag.withDescription("Comma-separated regions the source is about (AWS, GCP, Azure)"),
      Flag.optional
    )
  },
  Effect.fn(function*({ url, type, regions }) {
    const detected = Option.isSome(type)
      ? { provider: type.value, by: "flag" as const, url }
      : yield* detect(url)
    const adapter = adapterFor(detected.provider)!
    const source = {
      url: detected.url,
      ...(Option.isSome(regions) ? { regions: regions.value.split(",").map((r) => r.trim()).filter((r) => r !== "") } : {})
    }
    const snapshot = yield* Probe.read(adapter, source, new Date())
    yield* Console.log(JSON.stringify({ url: detected.url, provider: detected.provider, detected_by: detected.by, snapshot }, null, 2))
  }, Effect.provide(Fetcher.layer))
).pipe(Command.withDescription("Detect a status page's provider type and print what statusgrid reads from it, as JSON"))
