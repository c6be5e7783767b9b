import { listSources } from "#services/api/Sources.ts"
import { ListQuery, maxSearchLength } from "#services/domain/api/Sources.ts"
import { CategoryId, categoryNames, SourceStatus } from "#services/domain/Source.ts"
import { fromSourceStatus, statusLooks } from "#services/domain/StatusWords.ts"
import { Effect, Result, Schema } from "effect"
import { type FormEvent, useEffect, useRef } from "react"
import { Form, Link, useNavigation, useSubmit } from "react-router"
import type { Route } from "./+types/catalog.ts"
import { StatusBadge } from "../../components/StatusBadge.tsx"
import { runEffect } from "../../lib/effect.server.ts"
import catalogCss from "../../components/catalog/catalog.css?url"

export const links: Route.LinksFunction = () => [{ rel: "stylesheet", href: catalogCss }]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: loaderData?.query.q ? `“${loaderData.query.q}” in the catalog · statusgrid` : "Catalog · statusgrid" },
  { name: "description", content: "Search the status pages of 5,000+ cloud, payment, communication and developer services." }
]

/** Sources per page: enough to scan, small enough to render instantly on a phone. */
const pageSize = 30

const isCategory = Schema.is(CategoryId)
const isStatus = Schema.is(SourceStatus)
const decodeQuery = Schema.decodeUnknownResult(ListQuery)

/** The catalog's filters as they appear in the URL (`?q=&category=&status=&cursor=`). */
interface CatalogQuery {
  readonly q: string
  readonly category: CategoryId | ""
  readonly status: SourceStatus | ""
  readonly cursor: string
}

const readQuery = (url: URL): CatalogQuery => {
  const category = url.searchParams.get("category") ?? ""
  const status = url.searchParams.get("status") ?? ""
  return {
    // The API's Schema refuses control characters in a search (no name holds one); here they are dropped from what was typed.
    q: [...(url.searchParams.get("q") ?? "")].filter((c) => c >= " ").join("").trim().slice(0, maxSearchLength),
    // A hand-edited unknown category or status is ignored (the select shows "all").
    category: isCategory(category) ? category : "",
    status: isStatus(status) ? status : "",
    cursor: url.searchParams.get("cursor") ?? ""
  }
}

/** The catalog page's URL for `query` (empty filters left out). */
export const catalogHref = (query: Partial<CatalogQuery>): string => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value)
  const search = params.toString()
  return search === "" ? "/catalog" : `/catalog?${search}`
}

/** A page of catalog sources through the same query as `GET /api/v1/sources` (services/api/Sources.ts `listSources`). */
export async function loader({ request, context }: Route.LoaderArgs) {
  const query = readQuery(new URL(request.url))
  const decoded = decodeQuery({
    ...(query.q === "" ? {} : { search: query.q }),
    ...(query.category === "" ? {} : { category: query.category }),
    ...(query.status === "" ? {} : { status: query.status }),
    ...(query.cursor === "" ? {} : { cursor: query.cursor }),
    limit: String(pageSize)
  })
  if (Result.isFailure(decoded)) throw new Error(`catalog query did not decode: ${decoded.failure.message}`)
  const result = await runEffect(context, request, listSources(decoded.success).pipe(Effect.result))
  const page = Result.isSuccess(result) ? result.success : { data: [], next_cursor: null, limit: pageSize }
  return {
    query,
    searchMax: maxSearchLength,
    categories: CategoryId.literals.map((id) => ({ id, name: categoryNames[id] })),
    statuses: SourceStatus.literals.map((id) => ({ id, word: statusLooks[fromSourceStatus(id)].word })),
    /** A cursor this server did not hand out (an old or edited link). */
    staleCursor: Result.isFailure(result),
    next: page.next_cursor,
    sources: page.data.map((s) => ({
      key: s.key,
      name: s.name,
      description: s.description.length > 180 ? `${s.description.slice(0, 177)}…` : s.description,
      status: fromSourceStatus(s.status),
      categories: s.categories.map((c) => categoryNames[c]),
      components: s.components_count
    }))
  }
}

/** How long typing pauses before the results follow (one request per pause, not per key). */
const debounceMs = 200

export default function Catalog({ loaderData }: Route.ComponentProps) {
  const { query, sources, next, staleCursor, categories, statuses, searchMax } = loaderData
  const submit = useSubmit()
  const navigation = useNavigation()
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  const searchInput = useRef<HTMLInputElement>(null)
  const loading = navigation.state === "loading" && navigation.location.pathname === "/catalog"
  useEffect(() => () => clearTimeout(timer.current), [])
  // Back/forward: the box shows the URL's text unless the person is typing in it.
  useEffect(() => {
    const input = searchInput.current
    if (input !== null && document.activeElement !== input) input.value = query.q
  }, [query.q])

  // With JavaScript the results follow the form as it changes; the URL is kept in sync (replace, not push, per key).
  const onChange = (event: FormEvent<HTMLFormElement>) => {
    const form = event.currentTarget
    const typed = (event.target as HTMLElement).tagName === "INPUT"
    clearTimeout(timer.current)
    timer.current = setTimeout(() => {
      // Empty filters stay out of the URL (`/catalog?q=aws`, not `?q=aws&category=&status=`); a new search starts at page 1.
      const params = new URLSearchParams()
      for (const [name, value] of new FormData(form)) if (typeof value === "string" && value.trim() !== "") params.set(name, value.trim())
      void submit(params, { method: "get", action: "/catalog", replace: true, preventScrollReset: true })
    }, typed ? debounceMs : 0)
  }
  const filtered = query.q !== "" || query.category !== "" || query.status !== ""

  return (
    <section className="catalog">
      <div className="page-head">
        <div>
          <h1>Catalog</h1>
          <p className="muted">The official status pages statusgrid watches. Open one to see its components, incidents and history, or add it to a stack.</p>
        </div>
      </div>
      <Form method="get" role="search" className="catalog-filters panel" onChange={onChange} aria-label="Search the catalog">
        <div className="filter-field grow">
          <label htmlFor="catalog-q">Search</label>
          <input
            ref={searchInput}
            id="catalog-q"
            name="q"
            type="search"
            defaultValue={query.q}
            placeholder="Name, key or description: stripe, aws, e-mail…"
            maxLength={searchMax}
            autoComplete="off"
          />
        </div>
        <div className="filter-field">
          <label htmlFor="catalog-category">Category</label>
          <select id="catalog-category" name="category" defaultValue={query.category} key={`c-${query.category}`}>
            <option value="">All categories</option>
            {categories.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
          </select>
        </div>
        <div className="filter-field">
          <label htmlFor="catalog-status">Status</label>
          <select id="catalog-status" name="status" defaultValue={query.status} key={`s-${query.status}`}>
            <option value="">Any status</option>
            {statuses.map((s) => <option key={s.id} value={s.id}>{s.word}</option>)}
          </select>
        </div>
        <button type="submit" className="button">Search</button>
      </Form>

      <div className="catalog-results" aria-busy={loading}>
        <p className="result-count" role="status">
          {staleCursor
            ? "This page link is no longer valid."
            : sources.length === 0
            ? "No source matches."
            : `${query.cursor === "" ? "" : "More "}${sources.length}${next === null ? "" : "+"} ${sources.length === 1 ? "source" : "sources"}${filtered ? " match" : ""}`}
        </p>
        {staleCursor
          ? <p><Link to={catalogHref({ ...query, cursor: "" })}>Back to the first page</Link></p>
          : sources.length === 0
          ? (
            <div className="panel empty">
              <h2>Nothing found</h2>
              <p className="muted">Try a shorter word, another category or any status.</p>
              {filtered ? <p><Link to="/catalog">Show the whole catalog</Link></p> : null}
            </div>
          )
          : (
            <ul className="source-list" aria-label="Sources">
              {sources.map((s) => (
                <li key={s.key} className="source-row">
                  <div className="source-main">
                    <h2><Link to={`/sources/${s.key}`}>{s.name}</Link></h2>
                    <p className="source-meta">
                      <code>{s.key}</code>
                      {s.categories.length > 0 ? <span>{s.categories.join(" · ")}</span> : null}
                      <span>{s.components} {s.components === 1 ? "component" : "components"}</span>
                    </p>
                    {s.description ? <p className="source-description">{s.description}</p> : null}
                  </div>
                  <StatusBadge status={s.status} />
                </li>
              ))}
            </ul>
          )}
        {query.cursor !== "" || next !== null
          ? (
            <nav className="pager" aria-label="Pages">
              {query.cursor !== "" ? <Link to={catalogHref({ ...query, cursor: "" })}>← First page</Link> : <span />}
              {next !== null ? <Link to={catalogHref({ ...query, cursor: next })} className="button">Next page →</Link> : null}
            </nav>
          )
          : null}
      </div>
    </section>
  )
}
