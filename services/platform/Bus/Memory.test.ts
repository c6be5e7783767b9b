import { assert, describe, it } from "@effect/vitest"
import { compareIds } from "./Memory.ts"

describe("compareIds", () => {
  it("orders stream ids by time, then by sequence, numerically", () => {
    const ids = ["1700000000001-0", "1700000000000-10", "1700000000000-2", "0-0", "1700000000000-0"]
    assert.deepStrictEqual(ids.toSorted(compareIds), [
      "0-0",
      "1700000000000-0",
      "1700000000000-2",
      "1700000000000-10",
      "1700000000001-0"
    ])
  })
})
