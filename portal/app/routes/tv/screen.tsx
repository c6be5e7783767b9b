import { useEffect, useState } from "react"
import { data, Link } from "react-router"
import type { Route } from "./+types/screen.ts"
import { HealthBanner } from "../../components/StatusBadge.tsx"
import { Incidents } from "../../components/tv/Incidents.tsx"
import { Items } from "../../components/tv/Items.tsx"
import { ClockTime, LiveState } from "../../components/tv/LiveState.tsx"
import { loadTv, pageHeaders, screenHeaders } from "../../components/tv/screen.server.ts"
import { changeText, useLiveScreen } from "../../components/tv/useLiveScreen.ts"
import type { ScreenData, ScreenLinks } from "../../components/tv/screen.ts"
import { statusLooks } from "#services/domain/StatusWords.ts"
import { useNonce } from "../../lib/nonce.ts"
import screenStyles from "../../components/tv/screen.css?url"
import stylesheet from "../../components/tv/tv.css?url"

export const links: Route.LinksFunction = () => [
  { rel: "stylesheet", href: screenStyles },
  { rel: "stylesheet", href: stylesheet }
]

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.kind === "screen" ? loaderData.screen.title : "TV"} · TV · statusgrid` },
  { name: "robots", content: "noindex, nofollow" }
]

export const headers: Route.HeadersFunction = ({ loaderHeaders }) => pageHeaders(loaderHeaders)

/** The screen; a TV link's page may be framed where its organization allows (`screenHeaders`), never a member's. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const load = await loadTv(context, request, params.ref)
  if (load.kind !== "screen") return load
  const { organizationId, ...screen } = load
  return data(screen, { headers: await screenHeaders(context, request, organizationId) })
}

/** The TV page is dark whatever the viewer's preference: the class goes on <html> before the first paint. */
const darkNow = "document.documentElement.classList.add('theme-dark')"

export default function TvRoute({ loaderData }: Route.ComponentProps) {
  const nonce = useNonce()
  useEffect(() => {
    document.documentElement.classList.add("theme-dark")
    return () => document.documentElement.classList.remove("theme-dark")
  }, [])
  return (
    <div className="tv-screen">
      <script nonce={nonce} dangerouslySetInnerHTML={{ __html: darkNow }} />
      {loaderData.kind === "upgrade"
        ? (
          <section className="tv-upgrade">
            <h1>TV mode is a Pro-plan feature</h1>
            <p>{loaderData.message}.</p>
            <p><Link className="button" to="/orgs">Back to your organizations</Link></p>
          </section>
        )
        : <TvScreen initial={loaderData.screen} links={loaderData.links} />}
    </div>
  )
}

/**
 * Full screen, dark, large type: one stack at a time, the next after
 * `rotation_s` seconds without interaction, and beside it the running feed
 * (status changes seen live, then the incidents of the stacks' sources).
 */
function TvScreen({ initial, links }: { readonly initial: ScreenData; readonly links: ScreenLinks }) {
  const { screen, changes, connection, updatedAt } = useLiveScreen(initial, links)
  const [index, setIndex] = useState(0)
  const count = screen.stacks.length
  useEffect(() => {
    if (count < 2) return
    const timer = setInterval(() => setIndex((i) => (i + 1) % count), screen.rotation_s * 1000)
    return () => clearInterval(timer)
  }, [count, screen.rotation_s])
  const stack = count === 0 ? undefined : screen.stacks[index % count]

  return (
    <div className="tv-layout">
      <section className="tv-stage" aria-labelledby="tv-stack-name">
        <header className="tv-top">
          <p className="tv-eyebrow">{screen.title}</p>
          <LiveState connection={connection} updatedAt={updatedAt} />
        </header>
        {stack === undefined
          ? <h1 id="tv-stack-name" className="tv-stack-name">No stacks to show yet</h1>
          : (
            <>
              <div className="tv-stack-head">
                <h1 id="tv-stack-name" className="tv-stack-name" data-stack={stack.slug}>{stack.name}</h1>
                {count > 1
                  ? (
                    <ol className="tv-dots" aria-label={`Stack ${index % count + 1} of ${count}, next in ${screen.rotation_s} s`}>
                      {screen.stacks.map((s, i) => <li key={s.slug} className={i === index % count ? "is-current" : ""}>{s.name}</li>)}
                    </ol>
                  )
                  : null}
              </div>
              <HealthBanner banner={stack.banner} />
              {stack.unknown > 0 ? <p className="tv-note">{stack.unknown} not checked yet</p> : null}
              <Items items={stack.items} label={`Components of ${stack.name}`} />
            </>
          )}
      </section>
      <aside className="tv-feed" aria-labelledby="tv-feed-title">
        <h2 id="tv-feed-title">Incidents and changes</h2>
        {changes.length === 0 && screen.incidents.length === 0
          ? <p className="tv-feed-empty">No incidents. Changes appear here as they happen.</p>
          : null}
        {changes.length === 0 ? null : (
          <ul className="tv-changes" aria-label="Changes seen on this screen">
            {changes.map((change) => (
              <li key={change.id} className={`tv-change tone-${statusLooks[change.item.shown].tone}`}>
                <span aria-hidden="true" className="badge-icon">{statusLooks[change.item.shown].icon}</span>
                <span>
                  <span className="tv-change-text">{changeText(change)}</span>
                  <span className="tv-change-meta">{change.stack} · <ClockTime iso={change.at} /></span>
                </span>
              </li>
            ))}
          </ul>
        )}
        <Incidents incidents={screen.incidents} />
      </aside>
      <noscript>
        <meta httpEquiv="refresh" content="30" />
      </noscript>
    </div>
  )
}
