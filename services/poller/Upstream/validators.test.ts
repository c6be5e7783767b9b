import { describe, expect, it } from "@effect/vitest"
import { ValidatorCache } from "./validators.ts"

const base = { accept: "*/*" }
const urls = (cache: ValidatorCache, candidates: ReadonlyArray<string>) => candidates.filter((u) => cache.get(u) !== undefined)

describe("ValidatorCache", () => {
  it("sends the base headers with the remembered validators, and the same object while they hold", () => {
    const cache = new ValidatorCache(10, base)
    expect(cache.headers("/a")).toBe(base)
    cache.answered("/a", "\"1\"", undefined)
    const first = cache.headers("/a")
    expect(first).toEqual({ accept: "*/*", "if-none-match": "\"1\"" })
    cache.answered("/a", "\"1\"", undefined)
    expect(cache.headers("/a")).toBe(first)
    cache.answered("/a", "\"2\"", "Wed, 21 Oct 2026 07:28:00 GMT")
    expect(cache.headers("/a")).toEqual({ accept: "*/*", "if-none-match": "\"2\"", "if-modified-since": "Wed, 21 Oct 2026 07:28:00 GMT" })
    cache.answered("/a", undefined, undefined)
    expect(cache.get("/a")).toBeUndefined()
    expect(cache.headers("/a")).toBe(base)
  })

  it("forgets a URL not answered since it came before one answered again", () => {
    const cache = new ValidatorCache(3, base)
    for (const u of ["/1", "/2", "/3"]) cache.answered(u, `"${u}"`, undefined)
    cache.answered("/1", "\"/1\"", undefined)
    cache.answered("/4", "\"/4\"", undefined)
    expect(urls(cache, ["/1", "/2", "/3", "/4"])).toEqual(["/1", "/3", "/4"])
    // /1 was spared once; unanswered since, it is now the oldest not answered.
    cache.answered("/3", "\"/3\"", undefined)
    cache.answered("/5", "\"/5\"", undefined)
    expect(urls(cache, ["/1", "/2", "/3", "/4", "/5"])).toEqual(["/3", "/4", "/5"])
    expect(cache.size).toBe(3)
  })

  it("stays within its bound when every URL was answered again", () => {
    const cache = new ValidatorCache(2, base)
    for (const u of ["/1", "/2", "/1", "/2"]) cache.answered(u, "\"x\"", undefined)
    cache.answered("/3", "\"x\"", undefined)
    expect(cache.size).toBe(2)
    expect(cache.get("/3")?.etag).toBe("\"x\"")
  })

  it("remembers nothing with a bound of 0", () => {
    const cache = new ValidatorCache(0, base)
    cache.answered("/a", "\"1\"", undefined)
    expect(cache.size).toBe(0)
  })
})
