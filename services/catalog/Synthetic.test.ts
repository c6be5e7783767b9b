import { assert, describe, it } from "@effect/vitest"
import { syntheticSpec, syntheticSpecs } from "./Synthetic.ts"

describe("synthetic catalog", () => {
  it("gives the same source for the same index", () => {
    assert.deepStrictEqual(syntheticSpec(123), syntheticSpec(123))
  })

  it("spreads 4,100 sources over unique keys, every category, check class and provider format", () => {
    const specs = syntheticSpecs(4100)
    assert.strictEqual(new Set(specs.map((s) => s.key)).size, 4100)
    for (const s of specs) assert.match(s.key, /^sim-[a-z0-9-]+$/)
    assert.deepStrictEqual(
      new Set(specs.flatMap((s) => s.categories)),
      new Set(["cloud", "payment", "communication", "devtools", "monitoring", "cdn_dns"])
    )
    assert.deepStrictEqual(new Set(specs.map((s) => s.check_class)), new Set(["critical", "high", "standard", "low"]))
    const providers = new Set(specs.map((s) => s.provider))
    assert.strictEqual(providers.size, 14)
    const share = specs.filter((s) => s.provider === "statuspage_io").length / specs.length
    assert.approximately(share, 0.4, 0.05)
  })
})
