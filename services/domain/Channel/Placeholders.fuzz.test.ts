import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { renderTemplate, templatePlaceholders, unknownPlaceholders } from "./Placeholders.ts"

/** Issue #19: the template engine of custom notification templates. Fixed seed, bounded runs. */
const runs = { seed: 19, numRuns: 500 }

const known: ReadonlySet<string> = new Set(templatePlaceholders)
const knownName = fc.constantFrom(...templatePlaceholders)
/** Text with the characters templates care about: braces, names, and `$` patterns String#replace would expand. */
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.array(fc.constantFrom("{", "}", "{}", "{{", "}}", "status", "nope", "a b", "$&", "$1", "$$", "$'", "$`", "$<x>", " ", "\n"), { maxLength: 8 })
    .map((parts) => parts.join(""))
)
/** Values for every known placeholder, some missing, some that look like placeholders themselves. */
const vars = fc.dictionary(
  fc.oneof(knownName, fc.string({ maxLength: 8 })),
  fc.oneof(text, knownName.map((name) => `{${name}}`)),
  { maxKeys: 12 }
)
/** A template: text, known and unknown placeholders, stray braces. */
const template = fc.array(
  fc.oneof(text, knownName.map((name) => `{${name}}`), fc.stringMatching(/^\{[A-Za-z0-9_.-]{1,10}\}$/)),
  { maxLength: 8 }
).map((parts) => parts.join(""))

const hasKnownPlaceholder = (t: string) => templatePlaceholders.some((name) => t.includes(`{${name}}`))

describe("templates (fuzzed)", () => {
  it("any template and values render to a string, and unknown placeholders are listed, without throwing", () => {
    fc.assert(
      fc.property(template, vars, (t, v) => {
        assert.isString(renderTemplate(t, v))
        const unknown = unknownPlaceholders(t)
        assert.strictEqual(new Set(unknown).size, unknown.length)
        for (const name of unknown) {
          assert.isFalse(known.has(name))
          assert.include(t, `{${name}}`)
        }
      }),
      runs
    )
  })

  it("a template without known placeholders renders unchanged", () => {
    fc.assert(
      fc.property(template.filter((t) => !hasKnownPlaceholder(t)), vars, (t, v) => assert.strictEqual(renderTemplate(t, v), t)),
      runs
    )
  })

  it("values are inserted literally: not expanded again, `$` patterns kept, missing ones empty", () => {
    // Text between placeholders has no braces, so the template's placeholders are exactly the chosen ones.
    const plain = text.map((s) => s.replace(/[{}]/g, ""))
    fc.assert(
      fc.property(plain, fc.array(fc.tuple(knownName, plain), { maxLength: 6 }), vars, (head, rest, v) => {
        const t = head + rest.map(([name, after]) => `{${name}}${after}`).join("")
        const expected = head + rest.map(([name, after]) => `${Object.hasOwn(v, name) ? v[name] : ""}${after}`).join("")
        assert.strictEqual(renderTemplate(t, v), expected)
      }),
      runs
    )
  })
})
