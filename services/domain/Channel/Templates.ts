import { Schema } from "effect"
import { noNul } from "../Text.ts"

// Templates: the placeholders a notification text may use (spec: Notification rule, custom templates).

export const templatePlaceholders = [
  "status_emoji",
  "component_name",
  "status",
  "stack_name",
  "previous_status",
  "current_status",
  "duration",
  "incident_title",
  "incident_update_count",
  "stack_url"
] as const
const knownPlaceholders: ReadonlySet<string> = new Set(templatePlaceholders)

/** `{name}` is a placeholder; other braces are text. */
const placeholderPattern = /\{([A-Za-z0-9_.-]+)\}/g

/** The `{...}` placeholders of a template that are not in `templatePlaceholders`. */
export const unknownPlaceholders = (template: string): ReadonlyArray<string> =>
  [...new Set([...template.matchAll(placeholderPattern)].map((m) => m[1]!).filter((name) => !knownPlaceholders.has(name)))]

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
