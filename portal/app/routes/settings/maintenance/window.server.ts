import { MaintenanceWindowCreate } from "#services/domain/api/Maintenance.ts"
import { decodeForm, type FieldErrors, formFields } from "../../../lib/forms.server.ts"
import { isTimeZone, zonedInstant } from "#services/domain/WallClock.ts"
import type { WindowValues } from "../../../components/settings/maintenance/WindowForm.tsx"

const fieldNames = ["title", "description", "stack_id", "starts_local", "ends_local", "time_zone"] as const

/**
 * The form's fields as the API's `MaintenanceWindowCreate` (also the shape of
 * a full update): wall-clock times in the chosen zone become instants, then
 * the API's Schema decodes the whole body, so the messages are the API's.
 */
export const decodeWindowForm = (form: FormData):
  | { readonly ok: true; readonly value: MaintenanceWindowCreate; readonly values: WindowValues }
  | { readonly ok: false; readonly errors: FieldErrors; readonly values: WindowValues } =>
{
  const fields = formFields(form, fieldNames)
  const values: WindowValues = {
    title: fields["title"]!,
    description: fields["description"]!,
    stack_id: fields["stack_id"]!,
    starts_local: fields["starts_local"]!,
    ends_local: fields["ends_local"]!,
    time_zone: fields["time_zone"]!.trim()
  }
  const errors: Record<string, string> = {}
  const zoneKnown = isTimeZone(values.time_zone)
  if (!zoneKnown) errors["time_zone"] = "must be a time zone name such as UTC or Europe/Berlin"
  const instant = (local: string, field: "starts_at" | "ends_at") => {
    if (local === "") {
      errors[field] = "is required"
      return ""
    }
    const at = zoneKnown ? zonedInstant(local, values.time_zone) : undefined
    if (at === undefined && zoneKnown) errors[field] = "must be a date and time, e.g. 2026-12-01 10:00"
    return at?.toISOString() ?? ""
  }
  const body: Record<string, string | null> = {
    title: values.title,
    description: values.description,
    stack_id: values.stack_id === "" ? null : values.stack_id,
    starts_at: instant(values.starts_local, "starts_at"),
    ends_at: instant(values.ends_local, "ends_at")
  }
  const decoded = decodeForm(MaintenanceWindowCreate, body as Record<string, string>)
  if (!decoded.ok) {
    // The times' own messages (above) speak of what was typed; the Schema's would speak of the converted instant.
    const { starts_at: _, ends_at: __, ...others } = decoded.errors
    const timesUnread = !zoneKnown || errors["starts_at"] !== undefined || errors["ends_at"] !== undefined
    return { ok: false, errors: { ...(timesUnread ? others : decoded.errors), ...errors }, values }
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors, values }
  if (new Date(decoded.value.ends_at).getTime() <= new Date(decoded.value.starts_at).getTime()) {
    return { ok: false, errors: { ends_at: "must be after the start" }, values }
  }
  return { ok: true, value: decoded.value, values }
}
