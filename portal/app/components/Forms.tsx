import type { ReactNode } from "react"
import { useViewer } from "../lib/viewer.ts"

/** The session's CSRF token as the hidden `csrf` field every mutating form carries. */
export function CsrfField() {
  const viewer = useViewer()
  return <input type="hidden" name="csrf" value={viewer?.csrf ?? ""} />
}

/** A labelled input with its error beside it (aria-describedby), keeping what was typed. */
export function Field(props: {
  readonly name: string
  readonly label: string
  readonly type?: string
  readonly autoComplete?: string
  readonly defaultValue?: string | undefined
  readonly error?: string | undefined
  readonly hint?: ReactNode
  readonly required?: boolean
}) {
  const id = `field-${props.name}`
  const described = [props.error ? `${id}-error` : "", props.hint ? `${id}-hint` : ""].filter(Boolean).join(" ")
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? "text"}
        autoComplete={props.autoComplete}
        defaultValue={props.defaultValue}
        required={props.required ?? true}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={described || undefined}
      />
      {props.hint ? <p className="hint" id={`${id}-hint`}>{props.hint}</p> : null}
      {props.error ? <p className="field-error" id={`${id}-error`}>{props.label} {props.error}</p> : null}
    </div>
  )
}

/** A form-wide error (wrong password...). */
export function FormError({ message }: { readonly message: string | undefined }) {
  return message ? <p className="form-error" role="alert">{message}</p> : null
}
