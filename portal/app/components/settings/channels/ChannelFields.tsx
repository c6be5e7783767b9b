import { Field } from "../../Forms.tsx"
import { Control } from "../monitors/MonitorForm.tsx"
import type { ChannelField } from "./fields.ts"

/**
 * One channel type's settings as form controls, with each field's message
 * beside it. Secrets are never filled in: `storedSecrets` says which are
 * stored, so that the hint can say "blank keeps it".
 */
export function ChannelFields({ fields, values, errors, storedSecrets }: {
  readonly fields: ReadonlyArray<ChannelField>
  readonly values: Readonly<Record<string, string>>
  readonly errors: Readonly<Record<string, string>>
  readonly storedSecrets: boolean
}) {
  return (
    <>
      {fields.map((f) => {
        const required = f.required === true && !(f.kind === "secret" && storedSecrets)
        const hint = f.kind === "secret" && storedSecrets ? `${f.hint ?? ""} Stored; blank keeps it.`.trim() : f.hint
        if (f.kind === "checkbox") {
          return (
            <div className="choice" key={f.name}>
              <input type="checkbox" id={`field-${f.name}`} name={f.name} defaultChecked={values[f.name] === "on" || values[f.name] === "true"} />
              <label htmlFor={`field-${f.name}`}>{f.label}</label>
            </div>
          )
        }
        if (f.kind === "list" || f.kind === "lines") {
          return (
            <Control key={f.name} name={f.name} label={f.label} error={errors[f.name]} hint={hint}>
              {(attrs) => <textarea {...attrs} rows={3} required={required} defaultValue={values[f.name] ?? ""} spellCheck={false} />}
            </Control>
          )
        }
        if (f.kind === "select") {
          return (
            <Control key={f.name} name={f.name} label={f.label} error={errors[f.name]} hint={hint}>
              {(attrs) => (
                <select {...attrs} defaultValue={values[f.name] || f.options?.[0]}>
                  {(f.options ?? []).map((o) => <option key={o} value={o}>{o}</option>)}
                </select>
              )}
            </Control>
          )
        }
        return (
          <Field
            key={f.name}
            name={f.name}
            label={f.label}
            type={f.kind === "secret" ? "password" : f.kind === "number" ? "number" : "text"}
            {...(f.kind === "secret" ? { autoComplete: "off" } : {})}
            defaultValue={f.kind === "secret" ? "" : values[f.name]}
            error={errors[f.name]}
            hint={hint}
            required={required}
          />
        )
      })}
    </>
  )
}
