import { Form, Link, useNavigation } from "react-router"
import { CsrfField } from "../Forms.tsx"

/** What the source page's action answers: the stack it added to, or the errors by field (`form` for the whole form). */
export type AddResult =
  | {
    readonly ok: true
    readonly org: string
    readonly stack: { readonly name: string; readonly slug: string }
    readonly added: number
    readonly present: number
    readonly created: boolean
  }
  | {
    readonly ok: false
    readonly values: { readonly stack: string; readonly new_stack_name: string; readonly what: string }
    readonly errors: Readonly<Record<string, string>>
  }

/** What the loader says the viewer may do here. */
export type AddState =
  | { readonly kind: "signed-out" }
  | { readonly kind: "no-organization" }
  | { readonly kind: "read-only"; readonly org: { readonly slug: string; readonly name: string; readonly role: string } }
  | {
    readonly kind: "form"
    readonly org: { readonly slug: string; readonly name: string }
    readonly others: ReadonlyArray<{ readonly slug: string; readonly name: string }>
    readonly stacks: ReadonlyArray<{ readonly id: string; readonly name: string; readonly slug: string }>
    readonly groups: ReadonlyArray<{ readonly group: string; readonly items: ReadonlyArray<{ readonly id: string; readonly name: string }> }>
  }

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * The "Add to a stack" form of a source page: a stack of the organization (or a new one by name), the
 * whole source or ticked components grouped under their parent. A plain POST with the CSRF token; it
 * works without JavaScript. Viewers and signed-out people see why there is no form instead.
 */
export function AddToStack({ add, source, result }: {
  readonly add: AddState
  readonly source: { readonly key: string; readonly name: string }
  readonly result: AddResult | undefined
}) {
  const navigation = useNavigation()
  if (add.kind === "signed-out") {
    return <p><Link to={`/signin?next=${encodeURIComponent(`/sources/${source.key}`)}`}>Sign in</Link> to add {source.name} to one of your stacks.</p>
  }
  if (add.kind === "no-organization") return <p><Link to="/orgs/new">Create an organization</Link> to build stacks.</p>
  if (add.kind === "read-only") {
    return <p className="muted">Your role in {add.org.name} is {add.org.role}: you can view its stacks but not change them.</p>
  }
  const failed = result !== undefined && !result.ok ? result : undefined
  const errors = failed?.errors ?? {}
  const values = failed?.values
  const busy = navigation.state === "submitting"
  const stackChoice = values?.stack ?? (add.stacks.length === 0 ? "new" : add.stacks[0]!.id)
  const what = values?.what ?? "source"
  const error = (field: string) => errors[field] ? <p className="field-error" id={`add-${field}-error`}>{errors[field]}</p> : null
  const describedBy = (field: string) => errors[field] ? `add-${field}-error` : undefined
  const pickable = add.groups.reduce((n, g) => n + g.items.length, 0)

  return (
    // A new form after each success: the choices start over, the message stays.
    <Form method="post" className="add-form" aria-labelledby="add-title" key={result?.ok ? `${result.stack.slug}-${result.added}-${result.present}` : "add"}>
      <CsrfField />
      <input type="hidden" name="org" value={add.org.slug} />
      {result?.ok
        ? (
          <p className="form-success" role="status">
            {result.added > 0 ? `Added ${result.added === 1 && what === "source" ? source.name : plural(result.added, "component")}` : "Nothing new added"}
            {result.present > 0 ? ` (${plural(result.present, "item")} already there)` : ""} to {result.created ? "the new stack " : ""}
            <Link to={`/dashboard/${result.org}/stacks/${result.stack.slug}`}>{result.stack.name}</Link>.
          </p>
        )
        : null}
      {errors["form"] ? <p className="form-error" role="alert">{errors["form"]}</p> : null}
      <p className="org-choice muted">
        Stacks of <strong>{add.org.name}</strong>
        {add.others.map((o) => <span key={o.slug}> · <Link to={`?org=${o.slug}`}>{o.name}</Link></span>)}
      </p>
      <div className="field">
        <label htmlFor="add-stack">Stack</label>
        <select id="add-stack" name="stack" defaultValue={stackChoice} aria-invalid={errors["stack"] ? true : undefined} aria-describedby={describedBy("stack")}>
          {add.stacks.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
          <option value="new">A new stack…</option>
        </select>
        {error("stack")}
      </div>
      <div className="field">
        <label htmlFor="add-new_stack_name">New stack name</label>
        <input
          id="add-new_stack_name"
          name="new_stack_name"
          type="text"
          defaultValue={values?.new_stack_name ?? ""}
          aria-invalid={errors["new_stack_name"] ? true : undefined}
          aria-describedby={["add-new-hint", describedBy("new_stack_name")].filter(Boolean).join(" ")}
        />
        <p className="hint" id="add-new-hint">Used when the stack is “A new stack…”.</p>
        {error("new_stack_name")}
      </div>
      <fieldset aria-describedby={describedBy("what")}>
        <legend>What to add</legend>
        <div className="choice">
          <input type="radio" id="add-what-source" name="what" value="source" defaultChecked={what === "source"} />
          <label htmlFor="add-what-source">All of {source.name}</label>
        </div>
        {pickable > 0
          ? (
            <div className="choice">
              <input type="radio" id="add-what-components" name="what" value="components" defaultChecked={what === "components"} />
              <label htmlFor="add-what-components">Only the components ticked below</label>
            </div>
          )
          : null}
        {error("what")}
      </fieldset>
      {pickable > 0
        ? (
          <fieldset className="component-picker" aria-describedby={describedBy("components")}>
            <legend>Components ({pickable})</legend>
            {error("components")}
            {add.groups.map((g) => g.group === ""
              ? <Choices key="" items={g.items} />
              : (
                <fieldset key={g.group}>
                  <legend>{g.group}</legend>
                  <Choices items={g.items} />
                </fieldset>
              ))}
          </fieldset>
        )
        : null}
      <button type="submit" className="button" disabled={busy}>{busy ? "Adding…" : "Add to stack"}</button>
    </Form>
  )
}

/** With JavaScript, ticking a component also switches "What to add" to the ticked components. */
const pickComponents = (event: { readonly currentTarget: HTMLInputElement }) => {
  const radio = event.currentTarget.form?.querySelector<HTMLInputElement>("#add-what-components")
  if (event.currentTarget.checked && radio) radio.checked = true
}

function Choices({ items }: { readonly items: ReadonlyArray<{ readonly id: string; readonly name: string }> }) {
  return (
    <>
      {items.map((c) => (
        <div className="choice" key={c.id}>
          <input type="checkbox" id={`add-c-${c.id}`} name="component" value={c.id} onChange={pickComponents} />
          <label htmlFor={`add-c-${c.id}`}>{c.name}</label>
        </div>
      ))}
    </>
  )
}
