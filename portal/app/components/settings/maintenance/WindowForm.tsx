import { maintenanceLimits } from "#services/domain/api/Maintenance.ts"
import { useEffect, useRef } from "react"
import { localValue } from "#services/domain/WallClock.ts"
import { Field } from "../../Forms.tsx"
import { Control } from "../monitors/MonitorForm.tsx"

/** What the form shows: typed values (after a refused submit) or a window's, as wall clock in `time_zone`. */
export interface WindowValues {
  readonly title: string
  readonly description: string
  readonly stack_id: string
  readonly starts_local: string
  readonly ends_local: string
  readonly time_zone: string
}

/** A window as the form's values, its times as UTC wall clock (the zone the form then shows). */
export const windowValues = (w: { readonly title: string; readonly description: string; readonly stack_id: string | null; readonly starts_at: string; readonly ends_at: string }): WindowValues => ({
  title: w.title,
  description: w.description,
  stack_id: w.stack_id ?? "",
  starts_local: localValue(w.starts_at, "UTC"),
  ends_local: localValue(w.ends_at, "UTC"),
  time_zone: "UTC"
})

/**
 * The fields of a maintenance window: title, what it covers (the whole
 * organization or one stack), start and end as wall-clock times with their
 * time zone. The zone defaults to UTC without JavaScript; with it, a new
 * window's zone is the browser's.
 */
export function WindowFields({ values, errors, stacks, guessZone }: {
  readonly values: WindowValues | undefined
  readonly errors: Readonly<Record<string, string>>
  readonly stacks: ReadonlyArray<{ readonly id: string; readonly name: string }>
  /** Replace the default zone with the browser's (new windows, nothing typed yet). */
  readonly guessZone: boolean
}) {
  const zone = useRef<HTMLInputElement>(null)
  useEffect(() => {
    if (!guessZone || zone.current === null || zone.current.value !== "UTC") return
    zone.current.value = Intl.DateTimeFormat().resolvedOptions().timeZone
  }, [guessZone])
  return (
    <>
      <Field name="title" label="Title" defaultValue={values?.title} error={errors["title"]} hint={`What happens, e.g. “Database upgrade”. Up to ${maintenanceLimits.title} characters.`} />
      <Control name="description" label="Description" error={errors["description"]} hint="Optional; calendar subscribers see it too.">
        {(attrs) => <textarea {...attrs} rows={3} maxLength={maintenanceLimits.description} defaultValue={values?.description ?? ""} />}
      </Control>
      <Control name="stack_id" label="Covers" error={errors["stack_id"]} hint="While the window is open, alerts about what it covers are held.">
        {(attrs) => (
          <select {...attrs} defaultValue={values?.stack_id ?? ""}>
            <option value="">The whole organization</option>
            {stacks.map((s) => <option key={s.id} value={s.id}>Stack: {s.name}</option>)}
          </select>
        )}
      </Control>
      <div className="window-times">
        <Field name="starts_local" label="Starts" type="datetime-local" defaultValue={values?.starts_local} error={errors["starts_at"]} />
        <Field name="ends_local" label="Ends" type="datetime-local" defaultValue={values?.ends_local} error={errors["ends_at"]} />
      </div>
      <Control name="time_zone" label="Time zone" error={errors["time_zone"]} hint="Of the start and end above, as an IANA name: UTC, Europe/Berlin, America/New_York…">
        {(attrs) => <input {...attrs} ref={zone} type="text" required defaultValue={values?.time_zone ?? "UTC"} autoComplete="off" spellCheck={false} />}
      </Control>
    </>
  )
}
