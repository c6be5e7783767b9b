import { ApiKeyCreate } from "#services/domain/api/Organization.ts"
import { ApiKeys } from "#services/orgs/ApiKeys.ts"
import { Schema } from "effect"
import { data, Form } from "react-router"
import type { Route } from "./+types/api-keys.ts"
import stylesheet from "../../components/settings/team.css?url"
import { CsrfField, Field, FormError } from "../../components/Forms.tsx"
import { roleLabel, RoleSelect } from "../../components/settings/RoleSelect.tsx"
import { runEffect } from "../../lib/effect.server.ts"
import { decodeForm, type FieldErrors, formFields } from "../../lib/forms.server.ts"
import { requireMember, requireMemberAction } from "../../lib/member.server.ts"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: stylesheet }]

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `API keys · ${loaderData?.organization ?? "Settings"} · statusgrid` }]

const KeyTarget = Schema.Struct({ id: Schema.String.check(Schema.isUUID(undefined, { message: "must be a UUID" })) })

/** The organization's API keys (Admin: the ApiKeys service refuses others with its 403). */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { organization, principal } = await requireMember(context, request, params.org)
  const keys = await runEffect(context, request, ApiKeys.use((k) => k.list(principal, { limit: 500 })))
  return { organization: organization.name, keys: keys.data }
}

type Outcome = {
  readonly intent: string
  readonly values?: Record<string, string>
  readonly errors: FieldErrors
  readonly created?: { readonly name: string; readonly key: string } | undefined
  readonly notice?: string | undefined
}

export async function action({ request, context, params }: Route.ActionArgs) {
  const form = await request.formData()
  const { principal } = await requireMemberAction(context, request, form, params.org)
  const intent = String(form.get("intent") ?? "")
  if (intent === "create") {
    const fields = formFields(form, ["name", "role"])
    const decoded = decodeForm(ApiKeyCreate, fields)
    if (!decoded.ok) return data<Outcome>({ intent, values: fields, errors: decoded.errors }, { status: 400 })
    const created = await runEffect(context, request, ApiKeys.use((k) => k.create(principal, decoded.value)))
    // The key itself, this once: only its hash is stored.
    return { intent, errors: {}, created: { name: created.name, key: created.key } } satisfies Outcome
  }
  if (intent === "revoke") {
    const fields = formFields(form, ["id"])
    const decoded = decodeForm(KeyTarget, fields)
    if (!decoded.ok) return data<Outcome>({ intent, errors: decoded.errors }, { status: 400 })
    const revoked = await runEffect(context, request, ApiKeys.use((k) => k.revoke(principal, decoded.value.id)))
    return { intent, errors: {}, notice: `${revoked.name} was revoked; requests with it are refused.` } satisfies Outcome
  }
  return data<Outcome>({ intent, errors: { form: "unknown action" } }, { status: 400 })
}

const when = (iso: string | null) => (iso === null ? "never" : `${iso.slice(0, 16).replace("T", " ")} UTC`)

export default function ApiKeysPage({ loaderData, actionData }: Route.ComponentProps) {
  const outcome = actionData as Outcome | undefined
  const errors: Record<string, string | undefined> = outcome?.intent === "create" ? outcome.errors : {}
  return (
    <>
      <section className="panel">
        <h1>API keys</h1>
        <p className="muted">Keys call the API (<code>/api/v1</code>) with the role they were given. Send one as <code>Authorization: Bearer sg_…</code>.</p>
        {outcome?.created ? (
          <div className="secret-once" role="status">
            <strong>{outcome.created.name}: copy this key now. It is shown only once.</strong>
            <code data-testid="new-key">{outcome.created.key}</code>
          </div>
        ) : null}
        {outcome?.notice ? <p className="notice" role="status">{outcome.notice}</p> : null}
        {outcome?.intent === "revoke" && outcome.errors["id"] ? <FormError message={`Key ${outcome.errors["id"]}`} /> : null}
        <FormError message={outcome?.errors["form"]} />
        {loaderData.keys.length === 0 ? <p className="muted">No API keys yet.</p> : (
          <table className="team-table">
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Role</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th></tr>
            </thead>
            <tbody>
              {loaderData.keys.map((k) => (
                <tr key={k.id} data-key={k.name}>
                  <td>{k.name}</td>
                  <td><code>{k.prefix}…</code></td>
                  <td>{roleLabel[k.role]}</td>
                  <td>{when(k.created_at)}</td>
                  <td>{when(k.last_used_at)}</td>
                  <td>
                    {k.revoked_at !== null ? <span className="muted">Revoked {when(k.revoked_at)}</span> : (
                      <Form method="post">
                        <CsrfField />
                        <input type="hidden" name="intent" value="revoke" />
                        <input type="hidden" name="id" value={k.id} />
                        <button type="submit" className="button small danger" aria-label={`Revoke ${k.name}`}>Revoke</button>
                      </Form>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="panel">
        <h2>Create a key</h2>
        <Form method="post" noValidate className="inline-form">
          <CsrfField />
          <input type="hidden" name="intent" value="create" />
          <Field name="name" label="Name" autoComplete="off" defaultValue={outcome?.intent === "create" ? outcome.values?.["name"] : undefined} error={errors["name"]} hint="What uses it, as in “CI deploys”." />
          <RoleSelect id="key-role" label="Role" defaultValue={outcome?.intent === "create" ? outcome.values?.["role"] : "viewer"} error={errors["role"]} />
          <div className="field"><button type="submit" className="button">Create key</button></div>
        </Form>
      </section>
    </>
  )
}
