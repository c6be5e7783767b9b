// The placeholders of custom templates and their rendering: plain TypeScript (no Effect), so that the
// portal's rule editor renders its live preview in the browser with the notifier's own function.

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

/**
 * `template` with each known `{placeholder}` replaced by its value in `vars`
 * ("" when missing); unknown `{names}` are left as written (the API rejects
 * them on save, so only old or hand-made templates have them). The notifier
 * renders messages with it and the rule editor's preview too.
 */
export const renderTemplate = (template: string, vars: Readonly<Partial<Record<string, string>>>): string =>
  template.replace(placeholderPattern, (whole, name: string) => (knownPlaceholders.has(name) ? (vars[name] ?? "") : whole))

