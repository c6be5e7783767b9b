import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import * as fc from "fast-check"
import { fetched, fixtureBytes, joinUrl, simulatedAll } from "../../../test/support/fetched.ts"
import { awsRegions, gcpRegions } from "../../catalog/Synthetic.ts"
import { Snapshot } from "../../domain/Snapshot.ts"
import { generateSource } from "../../simulator/generate.ts"
import type { SimSource } from "../../simulator/Model.ts"
import { rendererByProvider } from "../../simulator/renderers/index.ts"
import { type Adapter, AdapterError, type Fetched, type SourceConfig } from "../Adapter.ts"
import { adapters } from "../registry.ts"
import { decodeText } from "../text.ts"

/**
 * Issue #19: whatever a status page serves, an adapter's `parse` yields a
 * valid snapshot or a typed AdapterError, never a throw nor a defect. Fixed
 * seed and bounded runs, so CI replays the same inputs.
 */
const runs = { seed: 19, numRuns: 60 }
const now = new Date("2026-09-23T14:00:00.000Z")

// ---- Targets: every adapter of the registry, and AWS's second format (current events) ----

interface Target {
  readonly adapter: Adapter
  readonly source: SourceConfig
  /** Realistic documents for each endpoint: the simulator's rendering and the shared fixtures. */
  readonly seeds: ReadonlyArray<ReadonlyArray<Fetched>>
  /** The documents swept value by value, as [seed, slot]: each fixture, and the simulator's secondaries. */
  readonly swept: ReadonlyArray<readonly [seed: number, slot: number]>
}

/** The shared fixtures of each provider (test/fixtures/), as the document of endpoint `slot` (default the primary). */
type FixtureFile = readonly [dir: string, file: string, slot?: number]
const fixtures: Record<string, ReadonlyArray<FixtureFile>> = {
  statuspage_io: [["statuspage", "statuspage-summary.json"]],
  github: [["statuspage", "statuspage-summary.json"]],
  incident_io: [["incidentio", "incidentio-compat-summary.json"]],
  instatus: [["instatus", "instatus-summary.json"], ["instatus", "instatus-v2-components.json", 1]],
  betterstack: [["betterstack", "betterstack-index.json"]],
  cachet_v2: [["cachet", "cachet-v2-components.json"]],
  cachet_v3: [["cachet", "cachet-v3-components.json"]],
  gcp: [["gcp", "gcp-incidents.json"]],
  aws: [["aws", "aws-health-all.rss"]],
  azure: [["azure", "azure-status-feed.xml"]],
  slack: [["slack", "slack-current.json"]],
  social: [["social", "mastodon-status.rss"], ["social", "bluesky-status.rss"]],
  rss: [["rss", "statuspage-history.atom"], ["rss", "betterstack-feed.rss"]],
  health_check: [["healthcheck", "rfc-health.json"], ["healthcheck", "spring-actuator-health.json"]]
}

/** A simulated page with something to read: a critical leaf, an open and a resolved incident, a maintenance. */
const simulatedSource = (provider: string): SimSource => {
  const regions = provider === "aws" ? awsRegions : provider === "gcp" ? gcpRegions : provider === "azure" ? ["eastus"] : undefined
  const baseUrl = `https://status.example.com/s/${provider}`
  const sim = generateSource({ key: `fuzz-${provider}`, name: "Fuzz", provider, baseUrl, now, components: 4, ...(regions ? { regions } : {}) })
  const [first, second] = sim.components.filter((c) => !c.is_group)
  first!.status = "critical"
  const at = (hoursAgo: number) => new Date(now.getTime() - hoursAgo * 3_600_000)
  sim.incidents.push(
    {
      id: "101",
      title: "Elevated errors",
      status: "resolved",
      impact: "minor",
      created_at: at(30),
      updated_at: at(29),
      resolved_at: at(29),
      updates: [{ id: "1", status: "investigating", body: "Looking", created_at: at(30) }, { id: "2", status: "resolved", body: "Fixed", created_at: at(29) }],
      components: [second!.id],
      region: second!.region
    },
    {
      id: "102",
      title: "API down",
      status: "identified",
      impact: "critical",
      created_at: at(2),
      updated_at: at(1),
      resolved_at: null,
      updates: [{ id: "3", status: "investigating", body: "Looking", created_at: at(2) }, { id: "4", status: "identified", body: "Found", created_at: at(1) }],
      components: [first!.id],
      region: first!.region
    }
  )
  sim.maintenances.push({
    id: "201",
    title: "Database upgrade",
    status: "scheduled",
    scheduled_for: at(-24),
    scheduled_until: at(-26),
    components: [first!.id],
    created_at: at(3),
    updated_at: at(3)
  })
  return sim
}

/** The simulator's GCP document carries ~200 historical incidents (~1 MB): the newest few make a seed. */
const trimmed = (doc: Fetched): Fetched => {
  if (doc.body.length < 50_000) return doc
  const list = JSON.parse(new TextDecoder().decode(doc.body)) as Array<unknown>
  return { ...doc, body: new TextEncoder().encode(JSON.stringify(list.slice(0, 3))) }
}

/** Where the simulator serves the documents of sources added by the document's own URL (below its page). */
const simulatedPaths: Record<string, ReadonlyArray<string>> = { rss: ["/history.atom", "/feed.rss"], social: ["/@status.rss"] }

const targetOf = (
  adapter: Adapter,
  url: string,
  files: ReadonlyArray<FixtureFile>,
  paths = simulatedPaths[adapter.id] ?? [""]
): Target => {
  const sim = simulatedSource(adapter.id)
  const source = { url }
  const endpoints = adapter.endpoints(source)
  const renderer = rendererByProvider[adapter.id as keyof typeof rendererByProvider]
  const rendered = paths.map((path) =>
    simulatedAll(adapter.endpoints({ url: joinUrl(sim.baseUrl, path) }), renderer, sim, now).map((doc, i) => trimmed({ ...doc, url: endpoints[i]! }))
  )
  // A fixture stands in for the simulator's document of its endpoint.
  const fromFixtures = files.map(([dir, file, slot = 0]) =>
    rendered[0]!.map((doc, i) => (i === slot ? fetched(endpoints[i]!, fixtureBytes(dir, file)) : doc))
  )
  const fixtureSlots = new Set(files.map(([, , slot = 0]) => slot))
  // Swept: each fixture, and the simulator's documents no fixture stands in for.
  const swept = [
    ...endpoints.flatMap((_, slot) => (fixtureSlots.has(slot) ? [] : rendered.map((_, seed) => [seed, slot] as const))),
    ...files.map(([, , slot = 0], i) => [rendered.length + i, slot] as const)
  ]
  return { adapter, source, seeds: [...rendered, ...fromFixtures], swept }
}

const page = "https://status.example.com/"
const awsEvents = "https://health.aws.amazon.com/public/currentevents"
const targets: ReadonlyArray<Target> = [
  ...adapters.map((adapter) => targetOf(adapter, page, fixtures[adapter.id] ?? [])),
  targetOf(adapters.find((a) => a.id === "aws")!, awsEvents, [["aws", "aws-currentevents.json"]], ["/public/currentevents"])
]

// ---- Inputs ----

/** Values that have broken parsers elsewhere: prototype keys, dates out of range, huge and odd numbers. */
const nastyStrings = [
  "", " ", "0", "-1", "1e999", "NaN", "null", "true", "__proto__", "constructor", "toString", "hasOwnProperty", "valueOf",
  "[constructor] API down", "Constructor: down", "2024-06-01 12:00:00", "2026-09-23T10:11:12Z", "Tue, 31 Feb 2026 25:61:00 GMT",
  "+275760-09-13T00:00:00.000Z", "-271821-04-20T00:00:00.000Z", "+275760-09-13T00:00:00.001Z", "99999999999", "9".repeat(25),
  "<!DOCTYPE html><html>", "\u0000", "\ud800", "\u2028", "a\r\nb", "&amp;", "&#0;", "&#x110000;", "%", "\\"
]
const nastyNumbers = [0, -0, -1, 1.5, 2 ** 31, 2 ** 53, 1e12, 8.64e15, 8.64e15 + 1, 1e21, 1e300, -1e300, 99999999999]
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<unknown>(...nastyStrings, ...nastyNumbers, null, true, false, [], {}, [null], { "": null }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) }
)

type Json = unknown
type Slot = { readonly parent: Record<string, Json> | Array<Json>; readonly key: string | number }

const isContainer = (value: Json): boolean => typeof value === "object" && value !== null

/** Every place in a JSON document a value sits, depth first. */
const slotsOf = (root: Json): Array<Slot> => {
  const slots: Array<Slot> = []
  const visit = (value: Json) => {
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        slots.push({ parent: value, key: i })
        visit(v)
      })
    } else if (typeof value === "object" && value !== null) {
      for (const [k, v] of Object.entries(value)) {
        slots.push({ parent: value as Record<string, Json>, key: k })
        visit(v)
      }
    }
  }
  visit(root)
  return slots
}

interface JsonMutation {
  readonly op: "replace" | "delete" | "duplicate" | "swap"
  readonly at: number
  readonly from: number
  readonly value: unknown
}
const jsonMutation: fc.Arbitrary<JsonMutation> = fc.record({
  op: fc.constantFrom("replace", "delete", "duplicate", "swap"),
  at: fc.nat(),
  from: fc.nat(),
  value: nasty
})

const get = (s: Slot): Json => (s.parent as Record<string | number, Json>)[s.key]
const set = (s: Slot, value: Json): void => {
  ;(s.parent as Record<string | number, Json>)[s.key] = value
}

/** The document with a few nodes replaced, removed, duplicated or swapped with another node's value. */
const mutateJson = (document: Json, mutations: ReadonlyArray<JsonMutation>): Json => {
  const root = { doc: structuredClone(document) }
  for (const m of mutations) {
    const slots = slotsOf(root)
    if (slots.length === 0) break
    // Values are replaced where values sit (leaves); structure is deleted, duplicated and swapped anywhere.
    const leaves = slots.filter((s) => !isContainer(get(s)))
    const pool = m.op === "replace" && leaves.length > 0 ? leaves : slots
    const slot = pool[m.at % pool.length]!
    const other = slots[m.from % slots.length]!
    if (m.op === "replace") set(slot, m.value)
    else if (m.op === "swap") set(slot, structuredClone(get(other)))
    else if (m.op === "duplicate" && Array.isArray(slot.parent)) slot.parent.push(structuredClone(get(slot)))
    else if (Array.isArray(slot.parent)) slot.parent.splice(Number(slot.key), 1)
    else delete slot.parent[slot.key as string]
  }
  return root.doc
}

/** XML and text snippets worth splicing into a feed. */
const snippets = [
  "<", ">", "&", "&amp;", "&lt;b&gt;", "&#0;", "&#x110000;", "&nbsp;", "&unknown;", "<![CDATA[", "]]>", "<![CDATA[<p>x</p>]]>",
  "<!DOCTYPE x [<!ENTITY a \"bb\">]>", "&a;", "<item>", "</item>", "<entry>", "</entry>", "<item/>", "<entry/>", "<channel/>",
  "<title>[constructor] Outage</title>", "<title>[toString] Resolved - x</title>", "<title>Constructor: down</title>",
  "<category>__proto__</category>", "<category term=\"constructor\"/>", "<guid>https://status.aws.amazon.com/#constructor_1758625200</guid>",
  "<guid>https://status.aws.amazon.com/#ec2-us-east-1_9999999999</guid>", "<pubDate>Tue, 31 Feb 2026 25:61:00 GMT</pubDate>",
  "<pubDate>+275760-09-13T00:00:00.001Z</pubDate>", "<updated>-271821-04-20T00:00:00Z</updated>", "<link href=\"\"/>",
  "<link>javascript:alert(1)</link>", "<description>THIS IS A SCHEDULED EVENT Feb 31, 99:99 - 99:99 UTC</description>",
  "<description>SCHEDULED EVENT Dec 31, 22:00 UTC - Jan 1, 02:00 UTC maintenance</description>",
  "<description>maintenance 2026-09-24T10:00:00Z 2026-09-24T08:00:00Z</description>", "<summary type=\"html\">&lt;p&gt;x&lt;/p&gt;</summary>",
  "1.10", "007", "1e5", "0x1F", "\u0000", "\ud800", "\uFEFF"
]

interface TextMutation {
  readonly op: "delete" | "insert" | "replace" | "truncate"
  readonly at: number
  readonly length: number
  readonly text: string
}
const textMutation: fc.Arbitrary<TextMutation> = fc.record({
  op: fc.constantFrom("delete", "insert", "replace", "truncate"),
  at: fc.nat(),
  length: fc.nat({ max: 200 }),
  text: fc.oneof(fc.constantFrom(...snippets, ...nastyStrings), fc.string({ unit: "binary", maxLength: 30 }))
})

const mutateText = (text: string, mutations: ReadonlyArray<TextMutation>): string =>
  mutations.reduce((t, m) => {
    const at = m.at % (t.length + 1)
    if (m.op === "truncate") return t.slice(0, at)
    if (m.op === "delete") return t.slice(0, at) + t.slice(at + m.length)
    if (m.op === "insert") return t.slice(0, at) + m.text + t.slice(at)
    return t.slice(0, at) + m.text + t.slice(at + Math.min(m.length, m.text.length + 20))
  }, text)

const parseJsonOrNull = (text: string): { readonly value: Json } | null => {
  try {
    return { value: JSON.parse(text) as Json }
  } catch {
    return null
  }
}

/** Text in the seed's own encoding: UTF-16 with its byte-order mark (AWS current events) or UTF-8. */
const encoderLike = (seed: Fetched) => (text: string): Uint8Array =>
  seed.body[0] === 0xff && seed.body[1] === 0xfe
    ? new Uint8Array([0xff, 0xfe, ...Buffer.from(text, "utf16le")])
    : new TextEncoder().encode(text)

/** A seed document mutated as JSON when it is JSON, as text otherwise (feeds, HTML). */
const mutatedBody = (seed: Fetched): fc.Arbitrary<Uint8Array> => {
  const text = decodeText(seed.body, seed.contentType)
  const parsed = text.trim().startsWith("<") ? null : parseJsonOrNull(text)
  const encode = encoderLike(seed)
  return parsed === null
    ? fc.array(textMutation, { minLength: 1, maxLength: 4 }).map((ms) => encode(mutateText(text, ms)))
    : fc.array(jsonMutation, { minLength: 1, maxLength: 6 }).map((ms) => encode(JSON.stringify(mutateJson(parsed.value, ms)) ?? ""))
}

const anyBody: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.string({ unit: "binary", maxLength: 300 }).map((s) => new TextEncoder().encode(s)),
  fc.jsonValue().map((v) => new TextEncoder().encode(JSON.stringify(v) ?? ""))
)

/** JSON nested `depth` levels deep (stack depth is finite), as objects (Spring-style health components) and as arrays. */
const deepBodies = (depth: number): ReadonlyArray<Uint8Array> =>
  [
    `${`{"id":"x","status":"UP","name":"n","components":{"c":`.repeat(depth)}{"status":"UP"}${"}}".repeat(depth)}`,
    `${"[".repeat(depth)}${"]".repeat(depth)}`
  ].map((text) => new TextEncoder().encode(text))

const statuses = fc.oneof(fc.constantFrom(200, 200, 200, 204, 304, 404, 429, 503), fc.integer({ min: 0, max: 999 }))
const contentTypes = fc.constantFrom(
  "",
  "application/json",
  "application/json; charset=utf-16",
  "application/rss+xml; charset=windows-1252",
  "text/xml; charset=\"iso-8859-1\"",
  "text/html",
  "text/plain; charset=nonsense"
)

/** One poll's documents for a target: seeds kept, mutated or replaced, some slots missing or failed. */
const documentsFor = (target: Target): fc.Arbitrary<ReadonlyArray<Fetched>> =>
  fc.constantFrom(...target.seeds).chain((seed) =>
    fc.tuple(
      fc.nat({ max: seed.length }),
      fc.tuple(...seed.map((doc) =>
        fc.record({
          body: fc.oneof({ weight: 1, arbitrary: fc.constant(doc.body) }, { weight: 4, arbitrary: mutatedBody(doc) }, { weight: 1, arbitrary: anyBody }),
          status: fc.oneof({ weight: 5, arbitrary: fc.constant(doc.status) }, { weight: 1, arbitrary: statuses }),
          contentType: fc.oneof({ weight: 5, arbitrary: fc.constant(doc.contentType) }, { weight: 1, arbitrary: contentTypes })
        }).map((over): Fetched => ({ ...doc, ...over }))
      ))
    ).map(([drop, docs]) => docs.slice(0, docs.length - (drop === seed.length ? drop : 0)))
  )

/** Single-value substitutions, tried systematically: each value of a seed in turn replaced by each of these. */
const sweepValues: ReadonlyArray<unknown> = [null, "", {}, -1, 1e300, 8.64e15 + 1, "+275760-09-13T00:00:00.001Z", "constructor"]
const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The seed with one value replaced, for every value of the seed (JSON leaves, XML text nodes) and every sweep value. */
const sweep = (seed: Fetched): Array<Uint8Array> => {
  const text = decodeText(seed.body, seed.contentType)
  const parsed = text.trim().startsWith("<") ? null : parseJsonOrNull(text)
  const encode = encoderLike(seed)
  if (parsed === null) {
    const nodes = [...text.matchAll(/>([^<>]+)</g)]
    return nodes.flatMap((node) =>
      sweepValues.filter((v) => typeof v === "string").map((v) =>
        encode(text.slice(0, node.index + 1) + escapeXml(v) + text.slice(node.index + node[0].length - 1))
      )
    )
  }
  const count = slotsOf({ doc: parsed.value }).filter((slot) => !isContainer(get(slot))).length
  return Array.from({ length: count }, (_, i) => i).flatMap((i) =>
    sweepValues.map((value) => encode(JSON.stringify(mutateJson(parsed.value, [{ op: "replace", at: i, from: 0, value }]))))
  )
}

/** Words feed readers look for, and words that are Object.prototype members. */
const feedWords = [
  "[constructor]", "[toString]", "[__proto__]", "constructor:", "Constructor -", "[Investigating]", "Resolved -", "Update:", "[Scheduled]",
  "outage", "down", "partial outage", "maintenance", "resolved", "restored", "SCHEDULED EVENT Feb 30, 25:00 - 26:00 UTC",
  "THIS IS A SCHEDULED EVENT Sep 24, 10:00 - 12:00 UTC", "2026-09-23T10:00:00Z", "2026-13-45T99:99:99Z", "East US", "constructor",
  "hasOwnProperty", "valueOf", "<b>", "&", "<", "\u0000", "\ud800", "'", "\""
]
const phrase = fc.array(fc.oneof(fc.constantFrom(...feedWords), fc.string({ maxLength: 12 })), { maxLength: 6 }).map((ws) => ws.join(" "))
const recentSeconds = fc.integer({ min: -5 * 86_400, max: 86_400 }).map((s) => Math.floor(now.getTime() / 1000) + s)
const awsGuid = fc.tuple(fc.constantFrom("ec2-us-east-1", "s3", "constructor", "toString-us-east-1", "valueOf", "__proto__"), recentSeconds)
  .map(([service, at]) => `https://status.aws.amazon.com/#${service}_${at}`)
const feedDate = fc.oneof(
  recentSeconds.map((at) => new Date(at * 1000).toUTCString()),
  recentSeconds.map((at) => new Date(at * 1000).toISOString()),
  phrase
)
const feedItem = fc.record({
  title: phrase,
  summary: phrase,
  guid: fc.oneof(phrase, awsGuid, fc.constant("")),
  link: fc.constantFrom("", "https://status.example.com/incidents/1", "https://status.example.com/", "not a url"),
  date: feedDate,
  categories: fc.array(phrase, { maxLength: 2 })
})

/** An RSS 2.0 or Atom feed of generated items, text escaped as XML. */
const generatedFeed = fc.tuple(fc.boolean(), fc.array(feedItem, { maxLength: 8 })).map(([atom, items]) =>
  atom
    ? `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Status</title><link href="https://status.example.com/"/>` +
      items.map((i) =>
        `<entry><id>${escapeXml(i.guid)}</id><title>${escapeXml(i.title)}</title><link href="${escapeXml(i.link)}"/>` +
        `<updated>${escapeXml(i.date)}</updated><summary type="html">${escapeXml(i.summary)}</summary>` +
        i.categories.map((c) => `<category term="${escapeXml(c)}"/>`).join("") + `</entry>`
      ).join("") + `</feed>`
    : `<?xml version="1.0"?><rss version="2.0"><channel><title>Status</title><link>https://status.example.com/</link>` +
      items.map((i) =>
        `<item><guid>${escapeXml(i.guid)}</guid><title>${escapeXml(i.title)}</title><link>${escapeXml(i.link)}</link>` +
        `<pubDate>${escapeXml(i.date)}</pubDate><description>${escapeXml(i.summary)}</description>` +
        i.categories.map((c) => `<category>${escapeXml(c)}</category>`).join("") + `</item>`
      ).join("") + `</channel></rss>`
)

// ---- The property ----

/** Functions or native-code text in a snapshot: a provider's value was looked up on Object.prototype. */
const leaksPrototype = (snapshot: unknown): boolean => {
  let leak = false
  JSON.stringify(snapshot, (_key, value: unknown) => {
    if (typeof value === "function" || (typeof value === "string" && value.includes("[native code]"))) leak = true
    return value
  })
  return leak
}
const isSnapshot = Schema.is(Snapshot)

/** Why a parse outcome breaks the contract, or null when it keeps it. */
const breach = (exit: Exit.Exit<Snapshot, AdapterError>): string | null => {
  if (Exit.isSuccess(exit)) {
    if (!isSnapshot(exit.value)) return `not a valid snapshot: ${JSON.stringify(exit.value).slice(0, 500)}`
    return leaksPrototype(exit.value) ? `a prototype member leaked into the snapshot: ${JSON.stringify(exit.value).slice(0, 500)}` : null
  }
  if (Cause.hasDies(exit.cause)) return `a defect: ${Cause.pretty(exit.cause)}`
  const error = Cause.findErrorOption(exit.cause)
  return error._tag === "Some" && error.value instanceof AdapterError ? null : `not an AdapterError: ${Cause.pretty(exit.cause)}`
}

const parseExit = (target: Target, documents: ReadonlyArray<Fetched>, at = now) =>
  Effect.runSync(Effect.exit(Effect.suspend(() => target.adapter.parse(documents, target.source, at))))

/** How parsing these documents breaks the contract, naming the adapter, or null. */
const problemOf = (target: Target, documents: ReadonlyArray<Fetched>, at = now): string | null => {
  const problem = breach(parseExit(target, documents, at))
  return problem === null ? null : `${target.adapter.id} (${target.source.url}): ${problem}`
}

/** Mostly the seeds' own time, so that their incidents are recent; sometimes any time at all. */
const pollTime = fc.oneof(
  { weight: 4, arbitrary: fc.constant(now) },
  { weight: 1, arbitrary: fc.date({ min: new Date("1970-01-01"), max: new Date("2200-01-01"), noInvalidDate: true }) }
)

describe("adapter parsers never throw (fuzzed)", () => {
  for (const target of targets) {
    const name = `${target.adapter.id} ${new URL(target.source.url).pathname}`

    it(`${name}: mutated real documents give a snapshot or an AdapterError`, () => {
      fc.assert(
        fc.property(documentsFor(target), pollTime, (documents, at) => assert.isNull(problemOf(target, documents, at))),
        { ...runs, numRuns: 100 }
      )
    })

    it(`${name}: arbitrary bytes, text and JSON give a snapshot or an AdapterError`, () => {
      const endpoints = target.adapter.endpoints(target.source)
      const document = fc.record({ body: anyBody, status: statuses, contentType: contentTypes })
      fc.assert(
        fc.property(fc.array(document, { maxLength: endpoints.length }), (docs) =>
          assert.isNull(problemOf(target, docs.map((d, i) => ({ url: endpoints[i]!, ...d }))))),
        runs
      )
    })
  }

  it("deeply nested JSON gives a snapshot or an AdapterError", () => {
    fc.assert(
      fc.property(fc.integer({ min: 5_000, max: 25_000 }), (depth) => {
        for (const body of deepBodies(depth)) {
          for (const target of targets) assert.isNull(problemOf(target, target.adapter.endpoints(target.source).map((u) => fetched(u, body))))
        }
      }),
      { ...runs, numRuns: 3 }
    )
  })

  const feedTargets = targets.filter((t) => ["rss", "social", "azure"].includes(t.adapter.id) || (t.adapter.id === "aws" && t.source.url === page))
  for (const target of feedTargets) {
    it(`${target.adapter.id}: generated feeds give a snapshot or an AdapterError`, () => {
      fc.assert(
        fc.property(generatedFeed, (xml) => assert.isNull(problemOf(target, [fetched(target.adapter.endpoints(target.source)[0]!, xml)]))),
        { ...runs, numRuns: 150 }
      )
    })
  }

  it("every value of every fixture replaced by each sweep value gives a snapshot or an AdapterError", () => {
    let parses = 0
    // Every distinct breach, not just the first: one line per adapter and problem.
    const problems = new Set<string>()
    // GitHub's parser is Statuspage's, on the same fixture.
    for (const target of targets.filter((t) => t.adapter.id !== "github")) {
      for (const [index, slot] of target.swept) {
        const seed = target.seeds[index]!
        for (const body of sweep(seed[slot]!)) {
          parses++
          const problem = breach(parseExit(target, seed.map((d, i) => (i === slot ? { ...d, body } : d))))
          if (problem !== null) problems.add(`${target.adapter.id} ${target.source.url}: ${problem.split("\n").slice(0, 3).join(" | ")}`)
        }
      }
    }
    assert.deepStrictEqual([...problems], [])
    assert.isAbove(parses, 5_000)
  })

  it("the seeds themselves parse to snapshots", () => {
    for (const target of targets) {
      for (const seed of target.seeds) {
        const exit = parseExit(target, seed)
        assert.isTrue(Exit.isSuccess(exit), `${target.adapter.id}: ${Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""}`)
      }
    }
  })
})
