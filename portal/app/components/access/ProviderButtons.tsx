const names = { google: "Google", microsoft: "Microsoft" } as const

/** A text mark per provider (no third-party logo files), hidden from screen readers: the button says the name. */
const marks = { google: "G", microsoft: "⊞" } as const

/**
 * "Continue with Google / Microsoft": plain links (a document navigation:
 * the provider is another site) to `/signin/<id>`, carrying `next`.
 */
export function ProviderButtons(props: {
  readonly providers: ReadonlyArray<{ readonly id: string; readonly kind: "google" | "microsoft" }>
  readonly next: string | null
}) {
  if (props.providers.length === 0) return null
  const query = props.next ? `?next=${encodeURIComponent(props.next)}` : ""
  return (
    <>
      <div className="access-providers">
        {props.providers.map((p) => (
          <a key={p.id} className="provider-button" href={`/signin/${encodeURIComponent(p.id)}${query}`}>
            <span className="provider-mark" aria-hidden="true">{marks[p.kind]}</span>
            Continue with {names[p.kind]}
          </a>
        ))}
      </div>
      <p className="or-rule">or with your e-mail</p>
    </>
  )
}
