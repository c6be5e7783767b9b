import { ChannelCreate } from "#services/domain/api/Notifications.ts"
import { channelFields, type FormChannelType } from "../../../components/settings/channels/fields.ts"
import { decodeForm, type FieldErrors } from "../../../lib/forms.server.ts"

const listOf = (text: string) => text.split(/[\n,]/).map((v) => v.trim()).filter((v) => v !== "")

/**
 * The type's settings from the form: lists split, "Name: value" lines as an
 * object, a checkbox as a boolean, a number as a number; blank fields are
 * left out (the Schema's default applies; on edit, a blank secret keeps the
 * stored one). `typed` keeps what was typed (never secrets) for a refused form.
 */
export const settingsFromForm = (type: FormChannelType, form: FormData) => {
  const settings: Record<string, unknown> = {}
  const typed: Record<string, string> = {}
  const errors: Record<string, string> = {}
  for (const field of channelFields[type]) {
    const raw = form.get(field.name)
    const text = typeof raw === "string" ? raw : ""
    if (field.kind !== "secret") typed[field.name] = text
    if (field.kind === "checkbox") {
      settings[field.name] = text === "on"
      continue
    }
    if (text.trim() === "") continue
    if (field.kind === "list") settings[field.name] = listOf(text)
    else if (field.kind === "number") settings[field.name] = /^\s*-?\d+\s*$/.test(text) ? Number(text) : text
    else if (field.kind === "lines") {
      const headers: Record<string, string> = {}
      for (const line of text.split("\n").map((l) => l.trim()).filter((l) => l !== "")) {
        const colon = line.indexOf(":")
        if (colon <= 0) errors[field.name] = "must be one “Name: value” per line"
        else headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim()
      }
      settings[field.name] = headers
    } else settings[field.name] = text.trim()
  }
  return { settings, typed, errors }
}

/** A service error's field (`settings.phone_numbers.0`) as the form's field (`phone_numbers`). */
export const formFieldOf = (field: string | undefined): string => {
  if (field === undefined) return "form"
  const parts = field.split(".")
  return parts[0] === "settings" && parts[1] !== undefined ? parts[1] : parts[0]!
}

/** Name and type decoded by the API's ChannelCreate (its messages), settings checked by the service. */
export const decodeChannelCreate = (type: FormChannelType, form: FormData):
  | { readonly ok: true; readonly value: ChannelCreate; readonly typed: Record<string, string> }
  | { readonly ok: false; readonly errors: FieldErrors; readonly typed: Record<string, string> } =>
{
  const { settings, typed, errors } = settingsFromForm(type, form)
  const name = typeof form.get("name") === "string" ? String(form.get("name")) : ""
  typed["name"] = name
  const decoded = decodeForm(ChannelCreate, { name, type, settings } as unknown as Record<string, string>)
  if (!decoded.ok || Object.keys(errors).length > 0) return { ok: false, errors: { ...(decoded.ok ? {} : decoded.errors), ...errors }, typed }
  return { ok: true, value: decoded.value, typed }
}
