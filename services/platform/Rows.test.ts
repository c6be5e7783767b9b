import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { firstOf, IntArrayColumn, JsonColumn, RowDecodeError, rowsOf, TextArrayColumn } from "./Rows.ts"

const Row = Schema.Struct({
  id: Schema.String,
  settings: JsonColumn(Schema.Struct({ url: Schema.String })),
  days: IntArrayColumn,
  tags: TextArrayColumn(Schema.Literals(["a", "b"])),
  at: Schema.Date
})
const decode = rowsOf("channels", Row)

describe("Rows", () => {
  it.effect("decodes jsonb and arrays in either form the driver hands them", () =>
    Effect.gen(function*() {
      const at = new Date("2026-11-23T12:00:00Z")
      const rows = yield* decode([
        { id: "1", settings: { url: "https://a" }, days: [30, 14], tags: ["a"], at },
        { id: "2", settings: "{\"url\":\"https://b\"}", days: "{7,1}", tags: "{a,b}", at }
      ])
      assert.deepStrictEqual(rows.map((r) => [r.settings.url, r.days, r.tags]), [
        ["https://a", [30, 14], ["a"]],
        ["https://b", [7, 1], ["a", "b"]]
      ])
      assert.isUndefined(yield* firstOf("channels", Row)([]))
    }))

  it.effect("a row that does not match is a defect naming the table and the field", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(decode([
        { id: "1", settings: { url: "https://a" }, days: [], tags: [], at: new Date() },
        { id: "2", settings: { url: 42 }, days: [], tags: [], at: new Date() }
      ]))
      assert.isTrue(Exit.isFailure(exit))
      const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.instanceOf(defect, RowDecodeError)
      const error = defect as RowDecodeError
      assert.strictEqual(error.table, "channels")
      assert.include(error.message, "channels")
      assert.include(error.message, `["settings"]["url"]`)
    }))
})
