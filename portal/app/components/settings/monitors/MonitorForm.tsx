import type { ReactNode } from "react"
import { Field } from "../../Forms.tsx"

type Values = Readonly<Record<string, string | undefined>>
type Errors = Readonly<Record<string, string | undefined>>

const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

/** A labelled native control (select, textarea) with its error beside it, as `Field` does for inputs. */
export function Control(props: {
  readonly name: string
  /** The control's id when a page has several forms with this field (default `field-<name>`). */
  readonly id?: string
  readonly label: string
  readonly error?: string | undefined
  readonly hint?: ReactNode
  readonly children: (attrs: { id: string; name: string; "aria-invalid"?: true; "aria-describedby"?: string }) => ReactNode
}) {
  const id = props.id ?? `field-${props.name}`
  const described = [props.error ? `${id}-error` : "", props.hint ? `${id}-hint` : ""].filter(Boolean).join(" ")
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.children({
        id,
        name: props.name,
        ...(props.error ? { "aria-invalid": true as const } : {}),
        ...(described ? { "aria-describedby": described } : {})
      })}
      {props.hint ? <p className="hint" id={`${id}-hint`}>{props.hint}</p> : null}
      {props.error ? <p className="field-error" id={`${id}-error`}>{props.label} {props.error}</p> : null}
    </div>
  )
}

/**
 * Every setting of a website monitor (services/domain/Monitor.ts). Secrets are
 * never filled in: on edit (`storedAuth`), blank keeps the stored ones.
 */
export function MonitorFields({ values, errors, storedAuth, warnings }: {
  readonly values: Values
  readonly errors: Errors
  readonly storedAuth?: "none" | "basic" | "bearer"
  readonly warnings?: Readonly<Record<string, string>>
}) {
  const keep = (kind: "basic" | "bearer") => storedAuth === kind ? "Stored and never shown; leave blank to keep it." : undefined
  const warn = (field: string) => warnings?.[field] ? <span className="warning-text">Recommendation: {warnings[field]}</span> : undefined
  return (
    <>
      <div className="form-grid">
        <Field name="name" label="Name" defaultValue={values["name"]} error={errors["name"]} />
        <Field name="url" label="URL" type="url" defaultValue={values["url"]} error={errors["url"]} hint="http:// or https:// address of the endpoint." />
      </div>
      <div className="form-grid three">
        <Control name="method" label="Method" error={errors["method"]}>
          {(attrs) => (
            <select {...attrs} defaultValue={values["method"] ?? "GET"}>
              {methods.map((m) => <option key={m}>{m}</option>)}
            </select>
          )}
        </Control>
        <Field
          name="expected_status"
          label="Expected status"
          defaultValue={values["expected_status"] ?? "200-299"}
          error={errors["expected_status"]}
          hint="Ranges and codes: 200-299, 301, 3xx."
        />
        <Field name="interval" label="Interval (seconds)" type="text" defaultValue={values["interval"] ?? "60"} error={errors["interval"]} hint={warn("interval") ?? "60 to 300 s is recommended."} />
        <Field
          name="alert_threshold"
          label="Alert after failures"
          defaultValue={values["alert_threshold"] ?? "3"}
          error={errors["alert_threshold"]}
          hint={warn("alert_threshold") ?? "Consecutive failures; 3 to 5 is recommended."}
        />
        <Field name="timeout" label="Timeout (ms)" defaultValue={values["timeout"] ?? "10000"} error={errors["timeout"]} />
        <Control name="keyword_mode" label="Body and keyword" error={errors["keyword_mode"]}>
          {(attrs) => (
            <select {...attrs} defaultValue={values["keyword_mode"] ?? "contains"}>
              <option value="contains">Contains</option>
              <option value="absent">Does not contain</option>
            </select>
          )}
        </Control>
      </div>
      <Field name="keyword" label="Keyword" defaultValue={values["keyword"]} error={errors["keyword"]} required={false} hint="Optional; case-sensitive." />
      <Control name="headers" label="Request headers" error={errors["headers"]} hint="One per line, as Name: value.">
        {(attrs) => <textarea {...attrs} rows={3} defaultValue={values["headers"]} spellCheck={false} />}
      </Control>
      <fieldset className="auth">
        <legend>Authentication</legend>
        <Control name="auth_type" label="Kind" error={errors["auth_type"]}>
          {(attrs) => (
            <select {...attrs} defaultValue={values["auth_type"] ?? "none"}>
              <option value="none">None</option>
              <option value="basic">Basic (user name and password)</option>
              <option value="bearer">Bearer token</option>
            </select>
          )}
        </Control>
        <div className="form-grid three">
          <Field name="auth_username" label="User name" autoComplete="off" error={errors["auth_username"]} required={false} hint={keep("basic")} />
          <Field name="auth_password" label="Password" type="password" autoComplete="new-password" error={errors["auth_password"]} required={false} />
          <Field name="auth_token" label="Bearer token" type="password" autoComplete="off" error={errors["auth_token"]} required={false} hint={keep("bearer")} />
        </div>
      </fieldset>
    </>
  )
}
