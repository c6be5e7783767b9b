import { Config, Console, Effect, Option, Result, Runtime, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Fs from "node:fs"
import { detect } from "../adapters/detect.ts"
import { Fetcher } from "../adapters/Fetcher.ts"
import * as Probe from "../adapters/Probe.ts"
import { adapterFor, providerIds } from "../adapters/registry.ts"
import { checkUrlTarget } from "../platform/AddressGuard.ts"
import { type CheckOutcome, makeAgentPool, requestFromSettings, runCheck } from "../monitors/HttpCheck.ts"
import { type FieldIssue, type ValidatedMonitor, validateMonitorResult } from "../monitors/Validate.ts"

/**
 * Ends `probe` with `code` once its output is printed. Already reported, so
 * the runtime adds no stack trace: 1 is a down target, 2 a check that could
 * not be run (invalid settings, refused address, unreadable CA file).
 */
export class ProbeExit extends Schema.TaggedError<ProbeExit>()("ProbeExit", {
  code: Schema.Number,
  message: Schema.String
}) {
  override readonly [Runtime.errorReported] = false
  override get [Runtime.errorExitCode](): number {
    return this.code
  }
}

/** What `probe --monitor` accepts, as given on the command line. */
export interface MonitorProbeFlags {
  readonly url: string
  readonly method: Option.Option<string>
  readonly header: ReadonlyArray<string>
  readonly expect: Option.Option<string>
  readonly keyword: Option.Option<string>
  readonly keywordAbsent: boolean
  readonly timeout: Option.Option<number>
  readonly degradedAfter: Option.Option<number>
  readonly followRedirects: boolean
  readonly insecure: boolean
  readonly bearer: Option.Option<string>
  readonly basic: Option.Option<string>
  readonly body: Option.Option<string>
}

/** The flag each monitor setting comes from, so that an issue names what to fix. */
const flagOf = (field: string): string => {
  const root = field.split(".")[0]!
  const flags: Record<string, string> = {
    url: "<url>",
    method: "--method",
    headers: "--header",
    expected_status: "--expect",
    keyword: "--keyword",
    keyword_mode: "--keyword-absent",
    timeout: "--timeout",
    degraded_after_ms: "--degraded-after",
    auth: "--bearer/--basic",
    body: "--body"
  }
  return flags[root] ?? ""
}

/**
 * The flags as a monitor's create body, validated like one (`validateMonitor`).
 * The interval only has to admit the timeout (a probe checks once), so it is
 * the smallest recommended one that does. Every problem is reported at once.
 */
export const monitorSettingsFromFlags = (flags: MonitorProbeFlags): Result.Result<ValidatedMonitor, ReadonlyArray<FieldIssue>> => {
  const issues: Array<FieldIssue> = []
  const headers: Record<string, string> = {}
  for (const line of flags.header) {
    const colon = line.indexOf(":")
    const name = colon > 0 ? line.slice(0, colon).trim() : ""
    if (name === "") {
      issues.push({ field: "headers", message: `${JSON.stringify(line)} is not "Name: value"` })
    } else if (Object.hasOwn(headers, name)) {
      issues.push({ field: `headers.${name}`, message: "is given twice" })
    } else {
      headers[name] = line.slice(colon + 1).trim()
    }
  }
  let auth: { type: "bearer"; token: string } | { type: "basic"; username: string; password: string } | undefined
  if (Option.isSome(flags.bearer) && Option.isSome(flags.basic)) {
    issues.push({ field: "auth", message: "give --bearer or --basic, not both" })
  } else if (Option.isSome(flags.bearer)) {
    auth = { type: "bearer", token: flags.bearer.value }
  } else if (Option.isSome(flags.basic)) {
    const colon = flags.basic.value.indexOf(":")
    if (colon < 0) issues.push({ field: "auth", message: "--basic takes user:password" })
    else auth = { type: "basic", username: flags.basic.value.slice(0, colon), password: flags.basic.value.slice(colon + 1) }
  }
  if (flags.keywordAbsent && Option.isNone(flags.keyword)) {
    issues.push({ field: "keyword_mode", message: "--keyword-absent needs --keyword TEXT" })
  }
  const timeout = Option.getOrUndefined(flags.timeout)
  const input = {
    name: "statusgrid probe",
    url: flags.url,
    interval: Math.min(86_400, Math.max(60, Math.ceil((timeout ?? 0) / 1000))),
    ...(timeout !== undefined ? { timeout } : {}),
    ...(Option.isSome(flags.method) ? { method: flags.method.value.toUpperCase() } : {}),
    headers,
    ...(Option.isSome(flags.expect) ? { expected_status: flags.expect.value } : {}),
    ...(Option.isSome(flags.keyword) ? { keyword: flags.keyword.value } : {}),
    keyword_mode: flags.keywordAbsent ? "absent" : "contains",
    ...(Option.isSome(flags.degradedAfter) ? { degraded_after_ms: flags.degradedAfter.value } : {}),
    follow_redirects: flags.followRedirects,
    tls_verify: !flags.insecure,
    ...(auth ? { auth } : {}),
    ...(Option.isSome(flags.body) ? { body: flags.body.value } : {})
  }
  const validated = validateMonitorResult(input)
  if (Result.isFailure(validated)) return Result.fail([...issues, ...validated.failure.issues])
  return issues.length > 0 ? Result.fail(issues) : Result.succeed(validated.success)
}

/** What `probe --monitor` prints: the check's outcome and the settings' warnings. */
export const printedOutcome = (url: string, outcome: CheckOutcome, warnings: ReadonlyArray<FieldIssue>) => ({
  url,
  status: outcome.status,
  http_status: outcome.http_status,
  error_code: outcome.error_code,
  error: outcome.error,
  phases: outcome.phases,
  reused: outcome.reused,
  redirects: outcome.redirects,
  final_url: outcome.final_url,
  bytes: outcome.bytes,
  truncated: outcome.truncated,
  ...(outcome.tls ? { tls: outcome.tls } : {}),
  warnings
})

const exitWith = Effect.fn("probe.exitWith")(function*(code: number, lines: ReadonlyArray<string>) {
  for (const line of lines) yield* Console.error(line)
  return yield* new ProbeExit({ code, message: lines[0] ?? "" })
})

/**
 * One website-monitor check of `flags.url`, as the poller would run it, on a
 * fresh connection pool. Private addresses are refused unless `allowPrivate`;
 * an unresolvable name is not refused here but reported as the check's `dns` failure.
 */
const probeMonitor = Effect.fn("probe.monitor")(function*(flags: MonitorProbeFlags, allowPrivate: boolean) {
  const validated = monitorSettingsFromFlags(flags)
  if (Result.isFailure(validated)) {
    return yield* exitWith(2, [
      "invalid monitor settings:",
      ...validated.failure.map((i) => `  ${i.field}${flagOf(i.field) ? ` (${flagOf(i.field)})` : ""}: ${i.message}`)
    ])
  }
  const { settings, warnings } = validated.success
  if (!allowPrivate) {
    const refused = yield* checkUrlTarget(settings.url, { allowPrivate: false }).pipe(Effect.flip, Effect.option)
    if (Option.isSome(refused) && refused.value.reason !== "dns") {
      return yield* exitWith(2, [`refused: ${refused.value.message} (--allow-private checks it anyway)`])
    }
  }
  const caFile = yield* Config.option(Config.String("MONITOR_CA_FILE")).pipe(Effect.orDie)
  let ca: string | undefined
  if (Option.isSome(caFile)) {
    try {
      ca = Fs.readFileSync(caFile.value, "utf8")
    } catch (e) {
      return yield* exitWith(2, [`cannot read MONITOR_CA_FILE ${caFile.value}: ${e instanceof Error ? e.message : String(e)}`])
    }
  }
  const pool = yield* Effect.acquireRelease(
    Effect.sync(() => makeAgentPool(ca === undefined ? {} : { ca })),
    (pool) => Effect.sync(() => pool.close())
  )
  const outcome = yield* Effect.promise(() => runCheck(requestFromSettings(settings), { agentPool: pool, allowPrivate }))
  yield* Console.log(JSON.stringify(printedOutcome(settings.url, outcome, warnings), null, 2))
  if (outcome.status === "down") return yield* new ProbeExit({ code: 1, message: outcome.error })
}, Effect.scoped)

/** Flags that only mean something with --monitor. */
const monitorOnly = (flags: MonitorProbeFlags & { readonly allowPrivate: boolean }): Array<string> => [
  ...(Option.isSome(flags.method) ? ["--method"] : []),
  ...(flags.header.length > 0 ? ["--header"] : []),
  ...(Option.isSome(flags.expect) ? ["--expect"] : []),
  ...(Option.isSome(flags.keyword) ? ["--keyword"] : []),
  ...(flags.keywordAbsent ? ["--keyword-absent"] : []),
  ...(Option.isSome(flags.timeout) ? ["--timeout"] : []),
  ...(Option.isSome(flags.degradedAfter) ? ["--degraded-after"] : []),
  ...(!flags.followRedirects ? ["--no-follow-redirects"] : []),
  ...(flags.insecure ? ["--insecure"] : []),
  ...(Option.isSome(flags.bearer) ? ["--bearer"] : []),
  ...(Option.isSome(flags.basic) ? ["--basic"] : []),
  ...(Option.isSome(flags.body) ? ["--body"] : []),
  ...(flags.allowPrivate ? ["--allow-private"] : [])
]

const monitorFlag = <A>(flag: Flag.Flag<A>, description: string) =>
  flag.pipe(Flag.withDescription(`With --monitor: ${description}`))

/**
 * `statusgrid probe <url>`: detect the provider type and print the normalized snapshot as JSON.
 * `statusgrid probe --monitor <url>`: run one website-monitor check and print its outcome as JSON;
 * exit 0 when up or degraded, 1 when down, 2 when the check cannot be run.
 */
export const probe = Command.make(
  "probe",
  {
    url: Argument.String("url").pipe(Argument.withDescription("A status page, feed or health endpoint URL; with --monitor, the URL to check")),
    type: Flag.Literals("type", providerIds).pipe(
      Flag.withDescription("Provider type to read the URL as, skipping detection"),
      Flag.optional
    ),
    regions: Flag.String("regions").pipe(
      Flag.withDescription("Comma-separated regions the source is about (AWS, GCP, Azure)"),
      Flag.optional
    ),
    monitor: Flag.Boolean("monitor").pipe(
      Flag.withDescription("Check the URL once as a website monitor would, and print the outcome (exit 1 when down)"),
      Flag.withDefault(false)
    ),
    method: monitorFlag(Flag.String("method"), "HTTP method (default GET)").pipe(Flag.optional),
    header: monitorFlag(Flag.String("header"), "request header 'Name: value' (repeatable)").pipe(Flag.atLeast(0)),
    expect: monitorFlag(Flag.String("expect"), "accepted status codes, e.g. 200-299, 2xx,301 (default 200-299)").pipe(Flag.optional),
    keyword: monitorFlag(Flag.String("keyword"), "text the body must contain (case-sensitive)").pipe(Flag.optional),
    keywordAbsent: monitorFlag(Flag.Boolean("keyword-absent"), "the --keyword text must not be in the body").pipe(
      Flag.withDefault(false)
    ),
    timeout: monitorFlag(Flag.Int("timeout"), "milliseconds for the whole check (default 10000)").pipe(Flag.optional),
    degradedAfter: monitorFlag(Flag.Int("degraded-after"), "a success slower than this many milliseconds is degraded").pipe(
      Flag.optional
    ),
    followRedirects: monitorFlag(Flag.Boolean("follow-redirects"), "follow up to 5 redirects (default; --no-follow-redirects)").pipe(
      Flag.withDefault(true)
    ),
    insecure: monitorFlag(Flag.Boolean("insecure"), "accept invalid TLS certificates (reported, not failed)").pipe(Flag.withDefault(false)),
    bearer: monitorFlag(Flag.String("bearer"), "send Authorization: Bearer TOKEN").pipe(Flag.optional),
    basic: monitorFlag(Flag.String("basic"), "send basic authentication, user:password").pipe(Flag.optional),
    body: monitorFlag(Flag.String("body"), "request body").pipe(Flag.optional),
    allowPrivate: monitorFlag(Flag.Boolean("allow-private"), "allow loopback, private and link-local addresses").pipe(
      Flag.withDefault(false)
    )
  },
  Effect.fn(function*({ url, type, regions, monitor, allowPrivate, ...flags }) {
    if (monitor) {
      if (Option.isSome(type) || Option.isSome(regions)) {
        return yield* exitWith(2, ["--type and --regions read status pages; they do not apply with --monitor"])
      }
      return yield* probeMonitor({ url, ...flags }, allowPrivate)
    }
    const stray = monitorOnly({ url, allowPrivate, ...flags })
    if (stray.length > 0) return yield* exitWith(2, [`${stray.join(", ")} ${stray.length === 1 ? "applies" : "apply"} only with --monitor`])
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
  }, Effect.provide(Fetcher.layerOperator))
).pipe(Command.withDescription(
  "Detect a status page's provider type and print what statusgrid reads from it, as JSON; " +
    "with --monitor, check a URL once as a website monitor and print the outcome"
))
