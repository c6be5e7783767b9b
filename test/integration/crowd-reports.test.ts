import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import { CrowdReports } from "../../services/crowd/CrowdReports.ts"
import { crowdDefaults, crowdReason, crowdScore, hourOfWeekOf, usualByHourOfWeek } from "../../services/domain/CrowdScore.ts"
import { Sessions } from "../../services/identity/Sessions.ts"
import { SecretBox } from "../../services/platform/SecretBox.ts"
import { apiServer } from "../support/api.ts"
import { awayFromBoundary, report, send } from "../support/crowd.ts"
import { catalogSource } from "../support/orgRecords.ts"

/**
 * Crowd reports through the HTTP API on PostgreSQL (issue #17, services/crowd/README.md). Each
 * reporter's address is a real socket address: on Linux all of 127.0.0.0/8 is the loopback, so a
 * request bound to 127.0.N.1 comes from that address and from the network 127.0.N.0/24.
 */

/** Reporters spread over networks (`networks[i]` reporters in network i) who all reported in the last minute: every window's evidence. */
const inTheLastMinute = (networks: ReadonlyArray<number>) => ({ networks, recent: crowdDefaults.shortWindowsMs.map(() => networks) })

/** What the model says for reporters spread over networks who all reported in the last minute, with no history. */
const expectedScore = (networks: ReadonlyArray<number>) => {
  const usual = usualByHourOfWeek([], crowdDefaults.baselineWeeks)[hourOfWeekOf(Date.now())]!
  const score = crowdScore({ ...inTheLastMinute(networks), usual, failingMonitorOrganizations: 0 })
  return { score, reason: crowdReason(score) }
}

const secretsKey = randomBytes(32).toString("base64")

describe("crowd reports", () => {
  layer(apiServer({ SECRETS_KEY: secretsKey }), { timeout: 180_000, excludeTestServices: true })("through the API on PostgreSQL", (it) => {
    it.effect("reports raise the score as the model says; duplicates, networks, components, bad input, the rate limit; nothing personal stored", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const quiet = yield* catalogSource(2)
        const office = yield* catalogSource(1)
        const limited = yield* catalogSource(1)
        yield* sql`UPDATE sources SET regions = '{us-east-1,eu-west-1}' WHERE id = ${quiet.id}`
        const addresses: Array<string> = []
        const at = (n: number) => {
          const address = `127.0.${n}.1`
          addresses.push(address)
          return address
        }
        // Every step below runs inside one 10-minute window (duplicates are per window).
        yield* awayFromBoundary(crowdDefaults.windowMs, 90)

        // Nobody reported yet: 0, and says so.
        const none = yield* send("GET", `/sources/${quiet.key}/crowd`, at(10))
        assert.strictEqual(none.status, 200, JSON.stringify(none.body))
        assert.include(none.body, { key: quiet.key, confidence: 0, reporters: 0, window_minutes: 10 })
        assert.strictEqual(none.body.reason, "No reports in the last 10 min.")

        // Eight addresses in eight networks: three name component 0, one a region.
        for (let n = 11; n <= 18; n++) {
          const body = n <= 13 ? { symptom: "down", component_id: quiet.components[0] } : n === 14 ? { symptom: "slow", region: "us-east-1" } : { symptom: "errors" }
          const r = yield* report(quiet.key, at(n), body)
          assert.strictEqual(r.status, 202, JSON.stringify(r.body))
          assert.strictEqual(r.body.counted, true)
          assert.strictEqual(r.body.score.reporters, n - 10)
        }
        const eight = expectedScore([1, 1, 1, 1, 1, 1, 1, 1])
        const score = yield* send("GET", `/sources/${quiet.key}/crowd`, at(10))
        assert.strictEqual(score.status, 200, JSON.stringify(score.body))
        assert.include(score.body, {
          key: quiet.key,
          confidence: eight.score.confidence,
          reporters: 8,
          networks: 8,
          counted: 8,
          expected: eight.score.expected,
          corroborating: 0,
          reason: eight.reason
        })
        assert.isAbove(score.body.confidence, crowdDefaults.startAt)
        // Eight within a minute where 0.2 in ten minutes is the least usual: the last minute is the most surprising.
        assert.strictEqual(score.body.reason, "8 reporters in 1 min, usually 0.02 or fewer.")
        assert.strictEqual(score.body.scored_minutes, 1)
        // The component reported is named in its own score; the region likewise.
        const three = expectedScore([1, 1, 1])
        assert.deepStrictEqual(score.body.components, [{
          id: quiet.components[0],
          name: `Component 0 of ${quiet.key}`,
          confidence: three.score.confidence,
          scored_minutes: three.score.windowMs / 60_000,
          reporters: 3,
          networks: 3,
          counted: 3,
          expected: three.score.expected,
          corroborating: 0,
          reason: three.reason
        }])
        assert.deepStrictEqual(score.body.regions.map((r: { region: string; reporters: number }) => [r.region, r.reporters]), [["us-east-1", 1]])

        // The same address again, with another symptom: the reporter is counted once.
        const again = yield* report(quiet.key, at(11), { symptom: "other" })
        assert.strictEqual(again.status, 202, JSON.stringify(again.body))
        assert.strictEqual(again.body.counted, false)
        assert.include(again.body.score, { reporters: 8, counted: 8, confidence: eight.score.confidence })

        // Eight accounts signed in from one network: eight reporters, two counted.
        const users: Array<string> = []
        for (let i = 0; i < 8; i++) {
          const [user] = yield* sql<{ id: string }>`
            INSERT INTO users (email, name) VALUES (${`crowd-${i}-${randomBytes(4).toString("hex")}@example.com`}, 'Crowd Person') RETURNING id`
          users.push(user!.id)
          const { token } = yield* Sessions.use((s) => s.create(user!.id)).pipe(Effect.provide(Sessions.layer))
          const r = yield* report(office.key, at(20), { symptom: "login" }, token)
          assert.strictEqual(r.status, 202, JSON.stringify(r.body))
          assert.strictEqual(r.body.counted, true, `account ${i}`)
        }
        const oneNetwork = expectedScore([8])
        const officeScore = yield* send("GET", `/sources/${office.key}/crowd`, at(10))
        assert.include(officeScore.body, {
          reporters: 8,
          networks: 1,
          counted: 2,
          confidence: oneNetwork.score.confidence,
          reason: oneNetwork.reason
        })
        assert.strictEqual(officeScore.body.reason, "8 reporters in 1 min from 1 network, usually 0.02 or fewer.")

        // Bad input: 400 naming the field; an unknown source 404.
        const symptom = yield* report(quiet.key, at(30), { symptom: "on fire" })
        assert.strictEqual(symptom.status, 400, JSON.stringify(symptom.body))
        assert.include(symptom.body, { code: "invalid_parameter", field: "symptom" })
        const foreign = yield* report(quiet.key, at(31), { symptom: "down", component_id: office.components[0] })
        assert.strictEqual(foreign.status, 400, JSON.stringify(foreign.body))
        assert.include(foreign.body, { code: "invalid_parameter", field: "component_id" })
        const notUuid = yield* report(quiet.key, at(31), { symptom: "down", component_id: "c0" })
        assert.include(notUuid.body, { code: "invalid_parameter", field: "component_id" })
        const region = yield* report(quiet.key, at(31), { symptom: "down", region: "mars-north-1" })
        assert.strictEqual(region.status, 400, JSON.stringify(region.body))
        assert.include(region.body, { code: "invalid_parameter", field: "region" })
        for (const [method, path] of [["POST", "/sources/no-such-source/reports"], ["GET", "/sources/no-such-source/crowd"]] as const) {
          const missing = yield* send(method, path, at(32), method === "POST" ? { body: { symptom: "down" } } : {})
          assert.strictEqual(missing.status, 404, `${method} ${path}: ${JSON.stringify(missing.body)}`)
          assert.include(missing.body, { code: "not_found", field: "key" })
        }
        // Refused reports changed no score.
        assert.include((yield* send("GET", `/sources/${quiet.key}/crowd`, at(10))).body, { reporters: 8 })

        // Ten reports a minute from one address, then 429 with Retry-After (all inside one minute).
        yield* awayFromBoundary(60_000, 15)
        for (let i = 1; i <= 10; i++) {
          const r = yield* report(limited.key, at(40), { symptom: "down" })
          assert.strictEqual(r.status, 202, `report ${i}: ${JSON.stringify(r.body)}`)
          assert.strictEqual(r.body.counted, i === 1)
        }
        const eleventh = yield* report(limited.key, at(40), { symptom: "down" })
        assert.strictEqual(eleventh.status, 429, JSON.stringify(eleventh.body))
        assert.strictEqual(eleventh.body.code, "rate_limited")
        assert.isAtLeast(Number(eleventh.headers.get("retry-after")), 1)
        assert.strictEqual(eleventh.body.retry_after_s, Number(eleventh.headers.get("retry-after")))
        // Another address is not limited by it.
        assert.strictEqual((yield* report(limited.key, at(41), { symptom: "down" })).status, 202)

        // No raw address or user id in any text, json, inet or array column of any table.
        const stored = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM crowd_reports`
        assert.strictEqual(stored[0]!.count, 8 + 8 + 2)
        const columns = yield* sql<{ table_name: string; column_name: string }>`
          SELECT c.table_name, c.column_name FROM information_schema.columns c
          JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
          WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
            AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'inet', 'cidr', 'ARRAY')
          ORDER BY 1, 2`
        assert.isAbove(columns.length, 50)
        assert.includeDeepMembers(
          columns.filter((c) => c.table_name === "crowd_reports").map((c) => c.column_name),
          ["reporter_hash", "network_hash", "symptom", "region"]
        )
        const needles = [...new Set(addresses), ...users]
        assert.lengthOf(needles, 1 + 8 + 1 + 3 + 2 + 8)
        const search = Effect.fnUntraced(function*(texts: ReadonlyArray<string>) {
          const found: Array<string> = []
          for (const { table_name, column_name } of columns) {
            const rows = yield* sql<{ value: string }>`
              SELECT ${sql(column_name)}::text AS value FROM ${sql(table_name)}
              WHERE ${sql.or(texts.map((n) => sql`${sql(column_name)}::text LIKE ${`%${n}%`}`))}`
            for (const row of rows) found.push(`${table_name}.${column_name}: ${row.value.slice(0, 120)}`)
          }
          return found
        })
        // The search finds what is there (a source's key, in sources.key and its components' names)...
        assert.includeMembers(yield* search([quiet.key]), [`sources.key: ${quiet.key}`])
        // ...and no address or user id anywhere.
        assert.deepStrictEqual(yield* search(needles), [])
        // The hashes are not the addresses' or ids' plain digests either: they are keyed.
        const hashes = yield* sql<{ reporter_hash: string; network_hash: string }>`SELECT reporter_hash, network_hash FROM crowd_reports`
        for (const row of hashes) assert.match(row.reporter_hash, /^[A-Za-z0-9_-]{43}$/)
        assert.strictEqual(new Set(hashes.map((h) => h.network_hash)).size, 8 + 1 + 2)
        console.log(JSON.stringify({ test: "crowd-reports", eight: eight.score, one_network: oneNetwork.score, columns_searched: columns.length }))
      }), 240_000)

    it.effect("the usual comes from the same hour of the week over the last four weeks, per source and per component", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const busy = yield* catalogSource(1)
        // The score is read within the clock hour the reports were written for.
        const leftInHour = 3_600_000 - (Date.now() % 3_600_000)
        if (leftInHour < 30_000) yield* Effect.sleep(leftInHour + 500)
        const hourStart = Math.floor(Date.now() / 3_600_000) * 3_600_000
        const week = 7 * 24 * 3_600_000
        // Weeks 1 to 4 ago at this hour: 12, 9, 15 and 12 distinct reporters; a third of each on the component.
        // Five weeks ago and an hour off do not count.
        const history: Array<{ readonly hourOfWeek: number; readonly reporters: number }> = []
        const componentHistory: Array<{ readonly hourOfWeek: number; readonly reporters: number }> = []
        const write = (at: number, reporters: number, onComponent: number) =>
          Effect.gen(function*() {
            for (let i = 0; i < reporters; i++) {
              const windowStart = Math.floor(at / crowdDefaults.windowMs) * crowdDefaults.windowMs
              yield* sql`
                INSERT INTO crowd_reports (source_id, component_id, reporter_hash, network_hash, symptom, window_start, created_at)
                VALUES (${busy.id}, ${i < onComponent ? busy.components[0]! : null}, ${`past-${at}-${i}`}, ${`net-${i}`}, 'down',
                  ${new Date(windowStart)}, ${new Date(at + i * 1000)})`
            }
          })
        for (const [weeksAgo, reporters] of [[1, 12], [2, 9], [3, 15], [4, 12]] as const) {
          const at = hourStart - weeksAgo * week + 20 * 60_000
          yield* write(at, reporters, reporters / 3)
          history.push({ hourOfWeek: hourOfWeekOf(at), reporters })
          componentHistory.push({ hourOfWeek: hourOfWeekOf(at), reporters: reporters / 3 })
        }
        // The hour before, a week ago: beside this hour, it counts; five weeks ago and two hours off do not.
        yield* write(hourStart - week - 3_600_000 + 20 * 60_000, 24, 0)
        history.push({ hourOfWeek: hourOfWeekOf(hourStart - week - 3_600_000), reporters: 24 })
        yield* write(hourStart - 5 * week + 20 * 60_000, 40, 0)
        yield* write(hourStart - week - 2 * 3_600_000 + 20 * 60_000, 40, 0)

        const now = Date.now()
        const usual = usualByHourOfWeek(history, crowdDefaults.baselineWeeks)[hourOfWeekOf(now)]!
        const componentUsual = usualByHourOfWeek(componentHistory, crowdDefaults.baselineWeeks)[hourOfWeekOf(now)]!
        // (12 + 9 + 15 + 12) / (4 weeks × 6 windows) = 2 at this hour, 24 / 24 = 1 the hour before, 0 after: 1 per window.
        assert.closeTo(usual, 1, 1e-12)
        // A third on the component: 2/3 at this hour, averaged with the hours beside it.
        assert.closeTo(componentUsual, 2 / 9, 1e-12)

        const r = yield* report(busy.key, "127.0.50.1", { symptom: "down", component_id: busy.components[0] })
        assert.strictEqual(r.status, 202, JSON.stringify(r.body))
        const one = crowdScore({ ...inTheLastMinute([1]), usual, failingMonitorOrganizations: 0 })
        // A lone reporter is most surprising in the last minute's window (a tenth of the usual).
        assert.include(r.body.score, { reporters: 1, expected: one.expected, confidence: one.confidence, reason: crowdReason(one) })
        assert.closeTo(one.expected, 1 / 10, 1e-12)
        assert.strictEqual(r.body.score.reason, "1 reporter in 1 min, usually 0.1.")
        const component = crowdScore({ ...inTheLastMinute([1]), usual: componentUsual, failingMonitorOrganizations: 0 })
        assert.include(r.body.score.components[0], { id: busy.components[0], expected: component.expected, confidence: component.confidence })
        assert.closeTo(component.expected, 2 / 9 / 10, 1e-12)
      }), 120_000)

    it.effect("reports sent at once are written and scored in batches: each answered once stored, a reporter twice in a batch counted once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const source = yield* catalogSource(0)
        yield* awayFromBoundary(crowdDefaults.windowMs, 30)
        // Thirty addresses in thirty networks, and one of them a second time, all at once.
        const from = [...Array.from({ length: 30 }, (_, i) => `127.0.${150 + i}.1`), "127.0.150.1"]
        const answers = yield* Effect.forEach(from, (address) => report(source.key, address, { symptom: "down" }), { concurrency: "unbounded" })
        assert.deepStrictEqual(answers.map((a) => a.status), from.map(() => 202), JSON.stringify(answers.find((a) => a.status !== 202)?.body))
        const twice = [answers[0]!, answers[30]!].map((a) => a.body.counted as boolean)
        assert.deepStrictEqual(twice.toSorted(), [false, true])
        assert.strictEqual(answers.filter((a) => a.body.counted === true).length, 30)
        const [stored] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM crowd_reports WHERE source_id = ${source.id}`
        assert.strictEqual(stored!.n, 30)
        // Each answer's score counts at most the reporters stored; the last batch's counts them all, as a read afterwards does.
        const seen = answers.map((a) => a.body.score.reporters as number)
        assert.isAtMost(Math.max(...seen), 30)
        assert.strictEqual(Math.max(...seen), 30)
        const after = yield* send("GET", `/sources/${source.key}/crowd`, "127.0.0.1")
        assert.strictEqual(after.body.reporters, 30)
        assert.isNotNull(after.body.signal)
      }), 120_000)

    it.effect("an IPv4-mapped IPv6 address is the same reporter as its IPv4 address; IPv6 reporters are grouped by /48", () =>
      Effect.gen(function*() {
        const source = yield* catalogSource(0)
        const crowd = yield* CrowdReports
        const from = (address: string) => crowd.report({ sourceKey: source.key, symptom: "down", address })
        assert.strictEqual((yield* from("127.0.60.1")).counted, true)
        assert.strictEqual((yield* from("::ffff:127.0.60.1")).counted, false)
        assert.strictEqual((yield* from("2001:db8:1:2::1")).counted, true)
        assert.strictEqual((yield* from("2001:0db8:0001:0002:0000:0000:0000:0001")).counted, false)
        assert.strictEqual((yield* from("2001:db8:1:3::1")).counted, true)
        const last = yield* from("2001:db8:2::1")
        assert.strictEqual(last.counted, true)
        assert.include(last.score, { reporters: 4, networks: 3, counted: 4 })
      }).pipe(Effect.provide(CrowdReports.layer.pipe(
        Layer.provide(Layer.succeed(SecretBox, SecretBox.fromKey(Buffer.from(secretsKey, "base64"))))
      ))))

    it.effect("organizations whose monitors of the provider's endpoints fail at the same time corroborate the reports, each once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        const source = yield* catalogSource(1)
        yield* sql`UPDATE sources SET service_url = 'https://www.birch-mail.example/app' WHERE id = ${source.id}`
        const org = (slug: string) =>
          sql<{ id: string }>`INSERT INTO organizations (name, slug) VALUES (${slug}, ${slug}) RETURNING id`.pipe(Effect.map((r) => r[0]!.id))
        const monitor = (orgId: string, url: string, state: string, changedMinutesAgo: number) =>
          sql`INSERT INTO monitors (organization_id, name, url, state, last_changed_at)
            VALUES (${orgId}::uuid, ${url}, ${url}, ${state}, now() - ${changedMinutesAgo} * interval '1 minute')`
        const tag = Math.random().toString(36).slice(2, 8)
        const [a, b, c, d] = [yield* org(`corr-a-${tag}`), yield* org(`corr-b-${tag}`), yield* org(`corr-c-${tag}`), yield* org(`corr-d-${tag}`)]
        // Two organizations whose monitors of the provider fail now (one of them with two such monitors)…
        yield* monitor(a, "https://api.birch-mail.example/health", "down", 3)
        yield* monitor(a, "https://birch-mail.example/", "degraded", 2)
        yield* monitor(b, "https://smtp.birch-mail.example:8443/ping", "down", 5)
        // …and what does not count: another host that merely ends alike, a monitor up, a failure of yesterday.
        yield* monitor(c, "https://notbirch-mail.example/", "down", 1)
        yield* monitor(c, "https://api.birch-mail.example/", "up", 1)
        yield* monitor(d, "https://api.birch-mail.example/old", "down", 24 * 60)

        yield* awayFromBoundary(crowdDefaults.windowMs, 30)
        // No report, no corroboration: monitors corroborate reports, they are not reporters.
        const quiet = yield* send("GET", `/sources/${source.key}/crowd`, "127.0.0.1")
        assert.include(quiet.body, { confidence: 0, corroborating: 0 })
        for (let n = 1; n <= 3; n++) assert.strictEqual((yield* report(source.key, `127.0.${120 + n}.1`, { symptom: "down" })).status, 202)
        const score = yield* send("GET", `/sources/${source.key}/crowd`, "127.0.0.1")
        const usual = usualByHourOfWeek([], crowdDefaults.baselineWeeks)[hourOfWeekOf(Date.now())]!
        const expected = crowdScore({ ...inTheLastMinute([1, 1, 1]), usual, failingMonitorOrganizations: 2 })
        assert.include(score.body, { reporters: 3, corroborating: 2, confidence: expected.confidence, reason: crowdReason(expected) })
        assert.isAbove(expected.confidence, crowdScore({ ...inTheLastMinute([1, 1, 1]), usual, failingMonitorOrganizations: 0 }).confidence)
        assert.include(score.body.reason, "monitors of 2 organizations failing too")
      }), 120_000)
  })
})
