import { Schema } from "effect"
import { noNul } from "../Text.ts"
import { templatePlaceholders, unknownPlaceholders } from "./Placeholders.ts"

export { renderTemplate, templatePlaceholders, unknownPlaceholders } from "./Placeholders.ts"

// Templates: the placeholders a notification text may use (spec: Notification rule, custom templates).

/** Template text with only known placeholders. */
export const TemplateText = (max: number) =>
  Schema.String.check(
    Schema.isBetweenLength(1, max, { message: `must be 1 to ${max} characters` }),
    noNul,
    Schema.makeFilter((s: string) => {
      const unknown = unknownPlaceholders(s)
      return unknown.length === 0 ||
        `uses unknown placeholder${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => `{${n}}`).join(", ")}; ` +
          `known: ${templatePlaceholders.map((n) => `{${n}}`).join(" ")}`
    })
  )
