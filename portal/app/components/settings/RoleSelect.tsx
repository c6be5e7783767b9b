import type { Role } from "#services/domain/Organization.ts"

export const roles: ReadonlyArray<Role> = ["admin", "member", "viewer"]
export const roleLabel: Readonly<Record<Role, string>> = { admin: "Admin", member: "Member", viewer: "Viewer" }

/** A role picker (native select) with its label, visible or only for screen readers, and its error beside it. */
export function RoleSelect(props: {
  readonly id: string
  readonly label: string
  readonly defaultValue?: string | undefined
  readonly error?: string | undefined
  readonly hideLabel?: boolean
}) {
  return (
    <div className={props.hideLabel ? "role-pick" : "field"}>
      <label htmlFor={props.id} className={props.hideLabel ? "visually-hidden" : undefined}>{props.label}</label>
      <select
        id={props.id}
        name="role"
        defaultValue={props.defaultValue ?? "member"}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={props.error ? `${props.id}-error` : undefined}
      >
        {roles.map((r) => <option key={r} value={r}>{roleLabel[r]}</option>)}
      </select>
      {props.error ? <p className="field-error" id={`${props.id}-error`}>{props.error}</p> : null}
    </div>
  )
}
