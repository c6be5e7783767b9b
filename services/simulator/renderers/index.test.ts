import { describe, expect, it } from "vitest"
import { providerIds } from "../../adapters/registry.ts"
import { rendererByProvider, rendererFor } from "./index.ts"

describe("renderer registry", () => {
  it("serves each provider of the adapter registry under its own key", () => {
    for (const id of providerIds) expect(rendererFor(id)?.provider).toBe(id)
    expect(Object.entries(rendererByProvider).filter(([key, r]) => r.provider !== key)).toEqual([])
  })

  it("knows no renderer for an unknown provider", () => {
    expect(rendererFor("nope")).toBeUndefined()
  })
})
